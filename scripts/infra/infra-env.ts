import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { configIssuesMessage, setting } from '../../common/config';
import { InfraError } from './errors';

/**
 * The one place the infrastructure scripts read process.env. Everything else receives the
 * parsed values as options, so tests can drive the modules without touching the environment.
 */

// An exported-but-empty variable (`FOO= npm test`) means "unset", not "the empty string".
const optionalString = z.preprocess((v) => (v === '' ? undefined : v), z.string().min(1).optional());
const optionalPort = z.preprocess((v) => (v === '' ? undefined : v), z.coerce.number().int().min(1).max(65535).optional());

export const infraEnvSchema = z.object({
  /** An external Temporal frontend (host:port); when set no dev server is started. */
  TEMPORAL_ADDRESS: optionalString,
  TEMPORAL_NAMESPACE: optionalString,
  /** An external MongoDB; when set FerretDB is not started. */
  MONGODB_URI: optionalString,
  WEFT_TEMPORAL_BIN: optionalString.meta(
    setting('local', 'An explicit `temporal` CLI binary for the dev server (skips `PATH`, the cache and the build).', {
      whenUnset: 'found on `PATH`, in the cache, or built with Go',
    }),
  ),
  /** The plain Temporal server (scripts/infra/temporal-server.ts: TLS and authorization tests). */
  WEFT_TEMPORAL_SERVER_BIN: optionalString.meta(
    setting('local', 'An explicit `temporal-server` binary, the plain server the TLS and authorization tests start.', {
      whenUnset: 'found on `PATH`, in the cache, or built with Go',
    }),
  ),
  WEFT_FERRETDB_BIN: optionalString.meta(
    setting('local', 'An explicit FerretDB binary (skips `PATH`, the cache and the build).', { whenUnset: 'found on `PATH`, in the cache, or built with Go' }),
  ),
  /** An executable that starts Temporal's time-skipping test server (argument: the port). */
  WEFT_TEMPORAL_TEST_SERVER: optionalString.meta(
    setting('local', "An executable that starts Temporal's time-skipping test server, given the port as its argument.", {
      whenUnset: 'fetched with Maven into the binary cache',
    }),
  ),
  WEFT_BIN_CACHE: optionalString.meta(
    setting('local', 'Where built server binaries are kept, shared by every clone for this user.', { whenUnset: '`${XDG_CACHE_HOME:-~/.cache}/weft/bin`' }),
  ),
  /** Port overrides for `npm start` when the defaults from temporal-dev.yaml are taken. */
  WEFT_TEMPORAL_PORT: optionalPort.meta(setting('local', 'Temporal dev server port under `npm start`.', { whenUnset: '7233 (`temporal-dev.yaml`)' })),
  WEFT_TEMPORAL_UI_PORT: optionalPort.meta(setting('local', 'Temporal UI port under `npm start`.', { whenUnset: '8233 (`temporal-dev.yaml`)' })),
  WEFT_FERRETDB_PORT: optionalPort.meta(setting('local', 'FerretDB port under `npm start`.', { whenUnset: '27017' })),
  XDG_CACHE_HOME: optionalString.meta(setting('local', 'The base of the default binary cache (`WEFT_BIN_CACHE`).', { whenUnset: '`~/.cache`' })),
  PATH: z.string().default('').meta(setting('local', 'Searched for the server binaries before the cache.')),
});

export type InfraEnv = z.infer<typeof infraEnvSchema>;

/** Names of the port override variables, for error messages that tell the user what to set. */
export const PORT_ENV = {
  temporal: 'WEFT_TEMPORAL_PORT',
  temporalUi: 'WEFT_TEMPORAL_UI_PORT',
  ferretdb: 'WEFT_FERRETDB_PORT',
} as const;

function readInfraEnv(env: NodeJS.ProcessEnv = process.env): InfraEnv {
  const parsed = infraEnvSchema.safeParse(env);
  if (!parsed.success) throw new InfraError('infra_env_invalid', configIssuesMessage(parsed.error.issues, infraEnvSchema.shape), parsed.error.issues);
  return parsed.data;
}

export interface InfraOptionsFromEnv {
  external: { temporalAddress?: string; temporalNamespace?: string; mongodbUri?: string };
  binaries: { temporal?: string; 'temporal-server'?: string; ferretdb?: string; temporalTestServer?: string; cacheDir: string };
  ports: { temporal?: number; temporalUi?: number; ferretdb?: number };
}

/** The pieces of `startInfrastructure` options that come from the environment. */
export function infraOptionsFromEnv(env: NodeJS.ProcessEnv = process.env): InfraOptionsFromEnv {
  const e = readInfraEnv(env);
  return {
    external: { temporalAddress: e.TEMPORAL_ADDRESS, temporalNamespace: e.TEMPORAL_NAMESPACE, mongodbUri: e.MONGODB_URI },
    binaries: {
      temporal: e.WEFT_TEMPORAL_BIN,
      'temporal-server': e.WEFT_TEMPORAL_SERVER_BIN,
      ferretdb: e.WEFT_FERRETDB_BIN,
      temporalTestServer: e.WEFT_TEMPORAL_TEST_SERVER,
      cacheDir: binaryCacheDirFrom(e),
    },
    ports: { temporal: e.WEFT_TEMPORAL_PORT, temporalUi: e.WEFT_TEMPORAL_UI_PORT, ferretdb: e.WEFT_FERRETDB_PORT },
  };
}

/** `$WEFT_BIN_CACHE`, else `${XDG_CACHE_HOME:-~/.cache}/weft/bin`: shared by every clone for this user. */
export function defaultBinaryCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return binaryCacheDirFrom(readInfraEnv(env));
}

function binaryCacheDirFrom(e: InfraEnv): string {
  if (e.WEFT_BIN_CACHE) return path.resolve(e.WEFT_BIN_CACHE);
  return path.join(e.XDG_CACHE_HOME ?? path.join(os.homedir(), '.cache'), 'weft', 'bin');
}

/** Directories of PATH, in order, for looking up server binaries. */
export function executableSearchPath(env: NodeJS.ProcessEnv = process.env): string[] {
  return readInfraEnv(env).PATH.split(path.delimiter).filter(Boolean);
}

/**
 * The environment for a child process: this process's environment minus variables the
 * child would misread as its own configuration (e.g. FERRETDB_LISTEN_ADDR or TEMPORAL_ADDRESS
 * left in a developer's shell), plus explicit overrides.
 */
export function childProcessEnv(overrides: Record<string, string> = {}, dropPrefixes: string[] = [], env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const result: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(env)) {
    if (value !== undefined && !dropPrefixes.some((p) => key.startsWith(p))) result[key] = value;
  }
  return { ...result, ...overrides };
}
