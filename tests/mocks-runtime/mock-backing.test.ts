import { cpSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { get } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { oneDrive } from '../../integrations/one-drive';
import { createGraphSimulator, GRAPH_DEFAULT_ACCESS_TOKEN } from '../../sandbox/graph';
import { writeMockRecording } from '../../runtime/mocks/fixture-files';
import { refusedConnections } from '../../runtime/mocks/network-guard';
import type { ConnectionInfo } from '../../runtime/types';
import { liveContext } from './live-recording';

// The mock backing checked against a recording made here: the sync and an action run over
// HTTP against the Graph simulator, their exchanges written with writeMockRecording (as
// `weft dryrun --save` does), then replayed by SyncMock / ActionMock with the simulator
// stopped. Recording happens in beforeAll: the first mock of this file arms the network guard.

const connection: ConnectionInfo = {
  connection_id: 'conn-od',
  provider_config_key: 'one-drive',
  provider: 'one-drive',
  auth_mode: 'OAUTH2',
  connection_config: {},
  metadata: {},
};

let project: string;
let recordedExchanges = 0;
let savedFiles = 0;

beforeAll(async () => {
  project = mkdtempSync(join(tmpdir(), 'weft-mock-backing-'));
  // Pages of at most 10 items: the sync's delta walk takes several pages, every one recorded.
  const sim = createGraphSimulator({ seed: 7, drives: [{ fileCount: 40 }], maxPageSize: 10, defaultPageSize: 10 });
  const simulatorUrl = await sim.start();
  try {
    const live = () => liveContext({ integration: oneDrive, simulatorUrl, headers: { authorization: `Bearer ${GRAPH_DEFAULT_ACCESS_TOKEN}` }, connection });
    const common = {
      projectDir: project,
      integration: 'one-drive',
      providerBaseUrl: oneDrive.provider.baseUrl,
      secretHeaders: [],
      connection,
      metadata: {},
      secrets: [GRAPH_DEFAULT_ACCESS_TOKEN],
    };

    const sync = live();
    await oneDrive.syncs.find((s) => s.name === 'user-files')!.exec(sync.ctx);
    recordedExchanges = sync.run.exchanges.length;
    savedFiles = sync.run.batchSave.File.length;
    await writeMockRecording({ ...common, functionName: 'user-files', kind: 'sync', ...sync.run });

    const action = live();
    const output = await oneDrive.actions.find((a) => a.name === 'list-drives')!.exec(action.ctx, {});
    await writeMockRecording({ ...common, functionName: 'list-drives', kind: 'action', ...action.run, batchSave: {}, batchDelete: {}, input: {}, output });
  } finally {
    await sim.stop();
  }
});
afterAll(() => rmSync(project, { recursive: true, force: true }));

/** A copy of the recorded mocks to alter in one test. */
function copyOfMocks(): string {
  const dir = mkdtempSync(join(tmpdir(), 'weft-mock-copy-'));
  cpSync(join(project, 'tests/mocks/one-drive/mocks'), dir, { recursive: true });
  return dir;
}

const mocksDir = () => join(project, 'tests/mocks/one-drive/mocks');

describe('SyncMock / ActionMock (the mocks at test time)', () => {
  it('replays a paginated sync from its mock files through the real pagination code, records as batchSave.json holds them', async () => {
    expect(readdirSync(join(mocksDir(), 'user-files/mocks')).length).toBe(recordedExchanges);
    expect(recordedExchanges).toBeGreaterThanOrEqual(5);

    const mock = new SyncMock({ integration: oneDrive, sync: 'user-files', mocksDir: mocksDir() });
    await mock.sync.exec(mock);
    expect(mock.calls).toHaveLength(recordedExchanges);
    expect(mock.getBatchSaveData('File')).toHaveLength(savedFiles);
    expect(mock.getBatchSaveData('File')).toStrictEqual(mock.expectedBatchSave('File'));
    expect(mock.getBatchDeleteData('File')).toStrictEqual([]);
    expect(mock.getTrackedDeletes()).toEqual(['File']);
    expect(mock.getSavedCheckpoint()).toMatchObject({ version: 1 });
  });

  it('replays an action: input.json in, its result equals output.json', async () => {
    const mock = new ActionMock({ integration: oneDrive, action: 'list-drives', mocksDir: mocksDir() });
    const output = await mock.action.exec(mock, mock.getInput());
    expect(mock.asRecorded(output)).toEqual(mock.getExpectedOutput());
    expect((output as { drives: unknown[] }).drives).toHaveLength(1);
  });

  it('fails a request with no recording, naming method, path, hash and the dryrun command that records it', async () => {
    const dir = copyOfMocks();
    // Every delta page but the first (the one without a `token`): the sync's second request has no recording.
    const request = (page: string) =>
      (JSON.parse(readFileSync(join(dir, 'user-files/mocks', page), 'utf8')) as { request: { path: string; query: Array<[string, string]> } }).request;
    const pages = readdirSync(join(dir, 'user-files/mocks')).filter((f) => request(f).path.endsWith('/root/delta'));
    expect(pages.length).toBeGreaterThan(1);
    const hasToken = (page: string) => request(page).query.some(([k]) => k === 'token');
    for (const page of pages.filter(hasToken)) unlinkSync(join(dir, 'user-files/mocks', page));
    const mock = new SyncMock({ integration: oneDrive, sync: 'user-files', mocksDir: dir });
    const failure = mock.sync.exec(mock);
    await expect(failure).rejects.toMatchObject({ code: 'mock_not_recorded' });
    await expect(failure).rejects.toThrow(
      /^No recorded response for GET \/v1\.0\/drives\/[^ ]+\/root\/delta \(hash [0-9a-f]{12}; .*token=REDACTED-[0-9a-f]{8}.*\) in .*user-files\/mocks\./,
    );
    await expect(failure).rejects.toThrow(/Record it with: weft dryrun user-files conn-od --save$/);
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers from the only file with the same method and path when the hash differs', async () => {
    const dir = copyOfMocks();
    const drives = readdirSync(join(dir, 'list-drives/mocks')).find((f) => f.startsWith('GET-v1-0-me-drives-'))!;
    renameSync(join(dir, 'list-drives/mocks', drives), join(dir, 'list-drives/mocks', 'GET-v1-0-me-drives-000000000000.json'));
    const mock = new ActionMock({ integration: oneDrive, action: 'list-drives', mocksDir: dir });
    expect(mock.asRecorded(await mock.action.exec(mock, mock.getInput()))).toEqual(mock.getExpectedOutput());
    rmSync(dir, { recursive: true, force: true });
  });

  it('a changed provider answer makes the comparison fail, and an invalid record fails validation as in production', async () => {
    const dir = copyOfMocks();
    const page = readdirSync(join(dir, 'user-files/mocks')).find((f) => f.startsWith('GET-v1-0-drives-'))!;
    const file = join(dir, 'user-files/mocks', page);
    const saved = JSON.parse(readFileSync(file, 'utf8'));
    const item = saved.response.body.value.find((i: { file?: unknown }) => i.file);
    item.name = 'renamed by the provider.txt';
    writeFileSync(file, JSON.stringify(saved));
    const changed = new SyncMock({ integration: oneDrive, sync: 'user-files', mocksDir: dir });
    await changed.sync.exec(changed);
    expect(changed.getBatchSaveData('File')).not.toStrictEqual(changed.expectedBatchSave('File'));

    item.size = -5;
    writeFileSync(file, JSON.stringify(saved));
    const invalid = new SyncMock({ integration: oneDrive, sync: 'user-files', mocksDir: dir });
    await expect(invalid.sync.exec(invalid)).rejects.toMatchObject({
      code: 'invalid_sync_record',
      detail: { model: 'File', validation: [expect.objectContaining({ path: 'size' })] },
    });
    rmSync(dir, { recursive: true, force: true });
  });

  it('opens no socket: once a mock is built, any connection attempt in the test file fails', async () => {
    new SyncMock({ integration: oneDrive, sync: 'user-files', mocksDir: mocksDir() });
    await expect(fetch('http://127.0.0.1:39999/')).rejects.toMatchObject({ cause: { code: 'ERR_WEFT_MOCK_NETWORK' } });
    await expect(
      new Promise((resolve, reject) => {
        const req = get('http://127.0.0.1:39999/', resolve);
        req.on('error', reject);
      }),
    ).rejects.toMatchObject({ code: 'ERR_WEFT_MOCK_NETWORK' });
    expect(refusedConnections()).toEqual(expect.arrayContaining([expect.stringContaining('127.0.0.1')]));
  });
});
