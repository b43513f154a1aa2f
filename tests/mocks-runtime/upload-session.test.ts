import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { oneDrive } from '../../integrations/one-drive';
import { refusedConnections } from '../../runtime/mocks/network-guard';
import { GRAPH_DEFAULT_ACCESS_TOKEN } from '../../sandbox/graph';
import { connectOneDrive, createOneDriveIntegration, startWeftStack, type WeftStack } from '../support/weft-stack';

// upload-file's upload-session path (above 320 KiB), which the committed recording does not
// take: the saved-mocks layout has one input.json per function, and the committed one is the small
// upload (one PUT). Here the real `weft dryrun --save` records a session upload against the
// Graph simulator into a project of its own, and ActionMock replays it: createUploadSession,
// then fragments PUT to the session's pre-authenticated uploadUrl (another host and path than
// the Graph API), matched by their bytes' SHA-256 and Content-Range, with the URL's
// `tempauth` redacted in every file yet still matching. Recording happens in beforeAll: the
// first mock of this file arms the network guard.

const REPO = join(__dirname, '..', '..');
const BIN = join(REPO, 'cli', 'bin.js');
/** Three fragments: two of 320 KiB and the rest. */
const BYTES = Buffer.from(Array.from({ length: 700_000 }, (_, i) => (i * 31 + (i >> 9)) & 0xff));

let project: string;
let mocksDir: string;
let dryRunOutput: { output: Record<string, unknown> };
let uploadCallsSeen: string[] = [];

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => (statSync(join(dir, name)).isDirectory() ? filesUnder(join(dir, name)) : [join(dir, name)]));
}

beforeAll(async () => {
  project = mkdtempSync(join(tmpdir(), 'weft-upload-session-'));
  mocksDir = join(project, 'tests', 'mocks', 'one-drive', 'mocks');
  let stack: WeftStack | undefined;
  try {
    stack = await startWeftStack({ graph: { seed: 23, drives: [{ fileCount: 3 }] }, worker: false, temporalCallTimeoutMs: 10_000 });
    await createOneDriveIntegration(stack);
    expect((await connectOneDrive(stack, 'session-drive')).status).toBe(201);
    const driveId = stack.graph.drives()[0].id as string;
    const inputFile = join(project, 'upload.json');
    writeFileSync(inputFile, JSON.stringify({ driveId, fileName: 'session-sized.bin', content: BYTES.toString('base64'), conflictBehavior: 'replace' }));
    const env = { ...process.env, WEFT_HOST: stack.apiUrl, WEFT_SECRET_KEY_DEV: stack.keys.dev, CI: '1', NO_COLOR: '1' };
    const args = [
      BIN,
      'dryrun',
      'upload-file',
      'session-drive',
      '--integration-id',
      'one-drive',
      '--input',
      `@${inputFile}`,
      '--save',
      '--json',
      '--project',
      project,
    ];
    const run = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) =>
      execFile(process.execPath, args, { cwd: project, env, maxBuffer: 32 * 1024 * 1024 }, (err, stdout, stderr) =>
        resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
      ),
    );
    expect({ code: run.code, stderr: run.code ? run.stderr : '' }).toEqual({ code: 0, stderr: '' });
    dryRunOutput = JSON.parse(run.stdout);
    uploadCallsSeen = stack.graph
      .requestLog()
      .filter((r) => r.path.startsWith('/_upload/'))
      .map((r) => `${r.method} ${r.path} ${r.status}`);
  } finally {
    await stack?.shutdown();
  }
});
afterAll(() => {
  if (project) rmSync(project, { recursive: true, force: true });
});

describe('upload-file through an upload session, recorded by weft dryrun --save', () => {
  it('writes createUploadSession and every fragment, the fragments identified by their bytes and range', () => {
    expect(uploadCallsSeen.sort()).toEqual(['PUT /_upload/session 201', 'PUT /_upload/session 202', 'PUT /_upload/session 202']);
    const files = readdirSync(join(mocksDir, 'upload-file', 'mocks')).sort();
    const saved = files.map((f) => JSON.parse(readFileSync(join(mocksDir, 'upload-file', 'mocks', f), 'utf8')));
    const session = saved.filter((m) => m.request.method === 'POST');
    const fragments = saved.filter((m) => m.request.path === '/_upload/session');
    expect(session).toHaveLength(1);
    expect(session[0].request.path).toMatch(/^\/v1\.0\/drives\/.+\/createUploadSession$/);
    expect(fragments.map((m) => m.response.status).sort()).toEqual([201, 202, 202]);
    // Graph sends no rate-limit headers: the X-RateLimit-* Weft's API sets on the proxied answer are not the provider's.
    expect(saved.map((m) => Object.keys(m.response.headers))).toEqual(saved.map(() => ['content-type']));
    const ranges = fragments.map((m) => Object.fromEntries(m.request.headers)['content-range']).sort();
    expect(ranges).toEqual(['bytes 0-327679/700000', 'bytes 327680-655359/700000', 'bytes 655360-699999/700000']);
    for (const m of fragments) {
      const range = /bytes (\d+)-(\d+)/.exec(Object.fromEntries(m.request.headers)['content-range'])!;
      const chunk = BYTES.subarray(Number(range[1]), Number(range[2]) + 1);
      expect(m.request.body).toBe(`sha256:${createHash('sha256').update(chunk).digest('hex')}`);
      expect(Object.fromEntries(m.request.query).tempauth).toMatch(/^REDACTED-[0-9a-f]{8}$/);
    }
  });

  it('holds no tempauth, token or Graph access token in any file', () => {
    const leaks = filesUnder(join(project, 'tests')).flatMap((file) => {
      const text = readFileSync(file, 'utf8');
      return [
        text.includes(GRAPH_DEFAULT_ACCESS_TOKEN) && 'access token',
        /[?&](tempauth|token|sig)=(?!REDACTED)[^&"\s]+/i.test(text) && 'signed-URL secret',
        /Bearer [A-Za-z0-9._-]{8,}/.test(text) && 'bearer',
      ]
        .filter(Boolean)
        .map((what) => `${relative(project, file)}: ${what}`);
    });
    expect(leaks).toEqual([]);
    const session = readdirSync(join(mocksDir, 'upload-file', 'mocks')).find((f) => f.startsWith('POST-'))!;
    expect(JSON.parse(readFileSync(join(mocksDir, 'upload-file', 'mocks', session), 'utf8')).response.body.uploadUrl).toMatch(
      /[?&]tempauth=REDACTED-[0-9a-f]{8}/,
    );
  });

  it('replays with ActionMock: the recorded output, every request answered from the files, no network', async () => {
    const mock = new ActionMock({ integration: oneDrive, action: 'upload-file', mocksDir });
    const input = mock.getInput() as { content: string };
    expect(Buffer.from(input.content, 'base64').equals(BYTES)).toBe(true);
    const output = await mock.action.exec(mock, input);
    expect(mock.asRecorded(output)).toEqual(mock.getExpectedOutput());
    expect(mock.getExpectedOutput()).toMatchObject({ name: 'session-sized.bin', size: BYTES.length });
    expect(mock.asRecorded(output)).toEqual(JSON.parse(JSON.stringify(dryRunOutput.output)));
    expect(mock.calls.map((c) => c.split(' ')[0] + ' ' + c.split(' ')[1].split('?')[0])).toEqual([
      expect.stringMatching(/^POST \/v1\.0\/drives\/.+\/createUploadSession$/),
      'PUT /_upload/session',
      'PUT /_upload/session',
      'PUT /_upload/session',
    ]);
    expect(refusedConnections()).toEqual([]);
  });

  it('a fragment whose bytes differ from the recording is not answered', async () => {
    const mock = new ActionMock({ integration: oneDrive, action: 'upload-file', mocksDir });
    const input = mock.getInput() as { content: string };
    const changed = Buffer.from(BYTES);
    changed[400_000] ^= 0xff;
    await expect(mock.action.exec(mock, { ...input, content: changed.toString('base64') })).rejects.toThrow(/No recorded response for PUT \/_upload\/session/);
  });
});
