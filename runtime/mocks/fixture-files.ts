import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { ConnectionInfo, HttpMethod, HttpResponse, RequestConfig } from '../types';
import { redactDeep, redactSecretsInText } from './redaction';
import { mockFileName, requestIdentity, type RequestIdentity } from './request-identity';

/**
 * The mock files, written by `weft dryrun --save` and
 * read by the mocks of generated tests:
 *
 *   tests/mocks/<integration>/mocks/
 *     <name>/input.json, <name>/output.json          actions
 *     <name>/<Model>/batchSave.json, batchDelete.json syncs
 *     <name>/mocks/<METHOD>-<path-slug>-<hash>.json   one provider response per distinct request
 *     <name>/weft/getConnection.json, getMetadata.json  what this function saw
 *     weft/getConnection.json, weft/getMetadata.json   the integration's (the last function saved)
 *
 * The per-function copy of the connection and metadata is Weft's addition: functions of one
 * integration run with different metadata (the file picker's selection, GitHub's repository
 * list), and each test must see what its own recording saw. A name with `/` in it
 * (`user-files/selected`) is a nested folder.
 */

export interface RecordedExchange {
  request: RequestConfig & { method: HttpMethod };
  response: HttpResponse;
}

export interface MockRecording {
  projectDir: string;
  /** The provider name, e.g. `one-drive`. */
  integration: string;
  functionName: string;
  kind: 'sync' | 'action';
  /** The provider definition's baseUrl (not an override): identity paths are the real API's. */
  providerBaseUrl: string;
  /** Lower-case, from the registry. */
  secretHeaders: string[];
  /** In call order, every page. */
  exchanges: RecordedExchange[];
  /** Per model, in call order. */
  batchSave: Record<string, unknown[]>;
  batchDelete: Record<string, unknown[]>;
  input?: unknown;
  output?: unknown;
  connection: ConnectionInfo;
  metadata: Record<string, unknown>;
  /** Literal secret values known to the caller, scrubbed wherever they appear. */
  secrets: string[];
}

/** One saved provider response: `{ request: <identity>, response: { status, headers, body } }`. */
export interface MockResponseFile {
  request: RequestIdentity;
  response: {
    status: number;
    headers: Record<string, string>;
    body: unknown;
    /** Set when the body was bytes: `body` is their base64. */
    bodyEncoding?: 'base64';
  };
}

/** The provider's meaningful response headers; everything else (Weft's own, per-hop, cookies) is dropped. */
const KEPT_RESPONSE_HEADER = /^(content-type|link|retry-after|etag|x-ratelimit-.*)$/;

/** Files of a function folder the writer owns (a sub-folder holding `mocks/` or `input.json` is another function's). */
const PLATFORM_FOLDER = 'weft';

function mocksRoot(projectDir: string, integration: string): string {
  return join(projectDir, 'tests', 'mocks', integration, 'mocks');
}

function functionMocksDir(projectDir: string, integration: string, functionName: string): string {
  return functionFolder(mocksRoot(projectDir, integration), functionName);
}

/** A function's folder under an integration's mocks folder (`user-files/selected` nests). */
export function functionFolder(mocksDir: string, functionName: string): string {
  return join(mocksDir, ...functionName.split('/'));
}

/**
 * Writes one run's mocks, replacing what an earlier save of the same function wrote. Every
 * file is redacted (see redaction.ts) before it is written.
 */
export async function writeMockRecording(rec: MockRecording): Promise<{ files: string[] }> {
  assertSafeName('integration', rec.integration);
  for (const part of rec.functionName.split('/')) assertSafeName('function name', part);
  const secrets = rec.secrets.filter((s) => typeof s === 'string' && s !== '');
  const root = mocksRoot(rec.projectDir, rec.integration);
  const fnDir = functionMocksDir(rec.projectDir, rec.integration, rec.functionName);
  await clearFunctionFolder(fnDir);

  const files = new Map<string, unknown>();
  if (rec.kind === 'action') {
    files.set(join(fnDir, 'input.json'), rec.input ?? null);
    files.set(join(fnDir, 'output.json'), rec.output ?? null);
  } else {
    for (const [model, records] of Object.entries(rec.batchSave)) files.set(join(fnDir, assertSafeName('model', model), 'batchSave.json'), records);
    for (const [model, records] of Object.entries(rec.batchDelete)) {
      if (records.length > 0) files.set(join(fnDir, assertSafeName('model', model), 'batchDelete.json'), records);
    }
  }
  const identityOptions = { providerBaseUrl: rec.providerBaseUrl, secretHeaders: rec.secretHeaders, secrets };
  for (const exchange of rec.exchanges) {
    // A request made twice is one file; the later answer is the one kept (a poll's final state).
    const identity = requestIdentity(exchange.request, identityOptions);
    files.set(join(fnDir, 'mocks', mockFileName(identity)), responseFile(identity, exchange.response, secrets));
  }
  const connection = { ...rec.connection, metadata: rec.metadata };
  for (const dir of [join(fnDir, PLATFORM_FOLDER), join(root, PLATFORM_FOLDER)]) {
    files.set(join(dir, 'getConnection.json'), connection);
    files.set(join(dir, 'getMetadata.json'), rec.metadata);
  }

  for (const [file, content] of files) {
    await mkdir(dirname(file), { recursive: true });
    await writeFile(file, `${JSON.stringify(redactDeep(content, secrets), null, 2)}\n`);
  }
  return { files: [...files.keys()] };
}

function responseFile(request: RequestIdentity, response: HttpResponse, secrets: string[]): MockResponseFile {
  const headers = Object.fromEntries(
    Object.entries(response.headers ?? {})
      .map(([k, v]) => [k.toLowerCase(), redactSecretsInText(String(v), secrets)] as const)
      .filter(([k]) => KEPT_RESPONSE_HEADER.test(k))
      .sort(([a], [b]) => (a < b ? -1 : 1)),
  );
  const data: unknown = response.data;
  if (Buffer.isBuffer(data) || data instanceof Uint8Array) {
    return { request, response: { status: response.status, headers, body: Buffer.from(data).toString('base64'), bodyEncoding: 'base64' } };
  }
  return { request, response: { status: response.status, headers, body: data === undefined ? null : data } };
}

/** Removes an earlier save's files of this function, keeping folders of functions nested under its name. */
async function clearFunctionFolder(fnDir: string): Promise<void> {
  if (!existsSync(fnDir)) return;
  for (const entry of await readdir(fnDir, { withFileTypes: true })) {
    const path = join(fnDir, entry.name);
    if (entry.isDirectory() && entry.name !== 'mocks' && entry.name !== PLATFORM_FOLDER && isFunctionFolder(path)) continue;
    await rm(path, { recursive: true, force: true });
  }
}

function isFunctionFolder(dir: string): boolean {
  return ['mocks', 'input.json', PLATFORM_FOLDER].some((name) => existsSync(join(dir, name)));
}

function assertSafeName(what: string, name: string): string {
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(name)) throw new Error(`Cannot write mocks: ${what} "${name}" is not a safe file name.`);
  return name;
}

/** Every saved response of a function, with the file it came from. */
export function readMockResponses(fnDir: string): Array<MockResponseFile & { file: string }> {
  const dir = join(fnDir, 'mocks');
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((name) => name.endsWith('.json'))
    .sort()
    .map((name) => ({ ...(JSON.parse(readFileSync(join(dir, name), 'utf8')) as MockResponseFile), file: join(dir, name) }));
}

/** A JSON fixture, or `fallback` when the file does not exist. */
export function readFixture<T>(file: string, fallback: T): T {
  if (!existsSync(file) || !statSync(file).isFile()) return fallback;
  return JSON.parse(readFileSync(file, 'utf8')) as T;
}

/**
 * The connection and metadata a function's recording saw: its own copy, else the
 * integration's `weft/` files (`<integration>/mocks/weft/`, shared by every function).
 */
export function platformFixture<T>(mocksDir: string, functionName: string, file: 'getConnection.json' | 'getMetadata.json', fallback: T): T {
  const own = join(functionFolder(mocksDir, functionName), PLATFORM_FOLDER, file);
  return existsSync(own) ? readFixture(own, fallback) : readFixture(join(mocksDir, PLATFORM_FOLDER, file), fallback);
}
