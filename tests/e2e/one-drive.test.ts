import type { GraphSimulator } from '../../sandbox/graph';
import { connectOneDrive, createOneDriveIntegration, runSync, startWeftStack, type WeftStack } from '../support/weft-stack';
import { readAllRecordsTyped } from '../support/weft-client';
import { actionResult, listRecords, startAction, triggerAction } from '../../cli/api-client/client';

const CONN = 'od-user';
const HEADERS = { 'connection-id': CONN, 'provider-config-key': 'one-drive' };

/** What the File records must say, computed from the simulator's own view of the drives. */
function expectedFiles(sim: GraphSimulator): Map<string, { path: string; is_folder: boolean; size: number | null; drive_id: string }> {
  const out = new Map<string, { path: string; is_folder: boolean; size: number | null; drive_id: string }>();
  for (const drive of sim.drives()) {
    for (const item of sim.items(drive.id as string) as any[]) {
      if (item.root) continue;
      const parent = String(item.parentReference.path);
      out.set(item.id, {
        path: `${decodeURIComponent(parent.slice(parent.indexOf(':') + 1))}/${item.name}`,
        is_folder: item.folder !== undefined,
        size: item.size ?? null,
        drive_id: drive.id as string,
      });
    }
  }
  return out;
}

/** Every record of a model of the connection, typed as that model. */
const readRecords = <M extends 'File' | 'SelectedFile'>(stack: WeftStack, model: M, filter?: string) =>
  readAllRecordsTyped(stack.client, { model, connectionId: CONN, providerConfigKey: 'one-drive', filter });

async function liveFiles(stack: WeftStack) {
  const records = await readRecords(stack, 'File');
  return new Map(records.filter((r) => r._weft_metadata.deleted_at === null).map((r) => [r.id, r]));
}

async function expectRecordsToMatchDrives(stack: WeftStack) {
  const expected = expectedFiles(stack.graph);
  const live = await liveFiles(stack);
  expect([...live.keys()].sort()).toEqual([...expected.keys()].sort());
  for (const [id, want] of expected) expect(live.get(id)).toMatchObject(want);
}

describe('OneDrive (Microsoft Graph), end to end', () => {
  let stack: WeftStack;

  beforeAll(async () => {
    stack = await startWeftStack({
      graph: { seed: 17, drives: [{ fileCount: 300 }, { fileCount: 60, driveType: 'documentLibrary', name: 'Team Documents' }] },
    });
    await createOneDriveIntegration(stack);
    const res = await connectOneDrive(stack, CONN);
    expect(res.status).toBe(201);
    await stack.waitForSync(CONN, 'user-files', { providerConfigKey: 'one-drive' });
  });
  afterAll(async () => stack?.shutdown());

  test('a refused token is not stored', async () => {
    const res = await connectOneDrive(stack, 'od-bad', 'not-a-token');
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('invalid_credentials');
  });

  test('list-drives answers at POST /action/trigger and at GET /v1/list-drives', async () => {
    const viaTrigger = await triggerAction(stack.client, { action: 'list-drives', input: {}, connectionId: CONN, providerConfigKey: 'one-drive' });
    expect(viaTrigger.response.status).toBe(200);
    expect(viaTrigger.data!.drives.map((d) => d.id).sort()).toEqual(
      stack.graph
        .drives()
        .map((d) => d.id)
        .sort(),
    );
    const team = viaTrigger.data!.drives.find((d) => d.name === 'Team Documents');
    expect(team).toMatchObject({ driveType: 'documentLibrary' });
    const viaEndpoint = await stack.client.GET('/v1/list-drives', { params: { header: HEADERS } });
    expect(viaEndpoint.data).toEqual(viaTrigger.data);
  });

  test('fetch-file returns a fresh download URL; folders, unknown items and bad input get clear errors', async () => {
    const drive = stack.graph.drives()[0].id as string;
    const items = stack.graph.items(drive) as any[];
    const file = items.find((i) => i.file);
    const folder = items.find((i) => i.folder && !i.root);

    const fetchFile = (itemId: string) => stack.client.GET('/v1/fetch-file', { params: { header: HEADERS, query: { driveId: drive, itemId } } });
    const ok = await fetchFile(file.id);
    expect(ok.response.status).toBe(200);
    expect(ok.data!.id).toBe(file.id);
    const download = await fetch(ok.data!.download_url);
    expect(download.status).toBe(200);
    expect((await download.arrayBuffer()).byteLength).toBeGreaterThan(0);

    const isFolder = await fetchFile(folder.id);
    expect(isFolder.response.status).toBe(400);
    expect(isFolder.error?.error.code).toBe('not_a_file');

    const gone = await triggerAction(stack.client, {
      action: 'fetch-file',
      input: { driveId: drive, itemId: 'NOPE0000000000000000' },
      connectionId: CONN,
      providerConfigKey: 'one-drive',
    });
    expect(gone.response.status).toBe(404);
    expect(gone.error?.error.code).toBe('file_not_found');

    // Malformed on purpose (no itemId; no such action): the untyped helper.
    const bad = await stack.api('POST', '/action/trigger', { headers: HEADERS, body: { action_name: 'fetch-file', input: { driveId: drive } } });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ code: 'invalid_action_input', errors: [{ path: 'itemId', code: 'invalid_type' }] });

    const unknown = await stack.api('POST', '/action/trigger', { headers: HEADERS, body: { action_name: 'delete-everything', input: {} } });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe('unknown_action');
  });

  test('an async action answers 202, then its output at GET /action/:id', async () => {
    const drive = stack.graph.drives()[0].id as string;
    const file = (stack.graph.items(drive) as any[]).find((i) => i.file);
    stack.graph.setLatency(400);
    const started = await startAction(stack.client, {
      action: 'fetch-file',
      input: { driveId: drive, itemId: file.id },
      connectionId: CONN,
      providerConfigKey: 'one-drive',
    });
    expect(started.response.status).toBe(202);
    const { id, statusUrl } = started.data!;
    // Its statusUrl is GET /action/{id}, which actionResult reads.
    expect(statusUrl).toBe(`/action/${id}`);
    const result = (client = stack.client) => actionResult(client, { action: 'fetch-file', id });
    const pending = await result();
    expect(pending.response.status).toBe(404);
    expect(pending.error?.error.code).toBe('action_pending');
    stack.graph.setLatency(0);
    let done = pending;
    for (let i = 0; i < 100 && done.response.status === 404; i++) {
      await new Promise((r) => setTimeout(r, 100));
      done = await result();
    }
    expect(done.response.status).toBe(200);
    expect(done.data?.id).toBe(file.id);
    // Another environment cannot read it.
    const other = await result(stack.clientWithKey(stack.keys.prod));
    expect(other.response.status).toBe(404);
  });

  test('user-files: the first run enumerated every drive, with paths', async () => {
    await expectRecordsToMatchDrives(stack);
    const page = await stack.client.GET('/v1/user-files', { params: { header: HEADERS, query: { limit: 5 } } });
    expect(page.response.status).toBe(200);
    expect(page.data!.records).toHaveLength(5);
    expect(page.data!.next_cursor).toEqual(expect.any(String));
    const unified = await listRecords(stack.client, { model: 'UnifiedFile', connectionId: CONN, providerConfigKey: 'one-drive', limit: 1 });
    expect(Object.keys(unified.records[0]).sort()).toEqual([
      '_weft_metadata',
      'container_id',
      'created_at',
      'id',
      'is_folder',
      'mime_type',
      'name',
      'parent_id',
      'path',
      'size',
      'updated_at',
      'web_url',
    ]);
  });

  test('user-files: a later run follows the delta links and applies only the changes', async () => {
    const before = await liveFiles(stack);
    const edited = stack.graph.editFiles(5);
    const deleted = stack.graph.deleteItems(3).filter((id) => !edited.includes(id));
    stack.graph.addFiles(4);
    stack.graph.resetStats();

    const summary = await runSync(stack, 'one-drive', CONN, 'user-files');
    // Updated: the edited files, plus the folders whose metadata (eTag, size) moved because
    // a child changed. Exactly the records whose content differs, nothing rewritten needlessly.
    const after = await liveFiles(stack);
    const strip = ({ _weft_metadata, ...data }: any) => data;
    const changed = [...after.keys()].filter((id) => before.has(id) && JSON.stringify(strip(before.get(id))) !== JSON.stringify(strip(after.get(id))));
    expect(changed).toEqual(expect.arrayContaining(edited));
    expect(changed.filter((id) => !edited.includes(id)).every((id) => after.get(id)?.is_folder)).toBe(true);
    expect(summary.result.File).toEqual({ added: 4, updated: changed.length, deleted: deleted.length });
    const deltaCalls = stack.graph.requestLog().filter((e) => e.path.endsWith('/root/delta'));
    expect(deltaCalls).toHaveLength(2); // one per drive, each from its saved delta link
    expect(deltaCalls.every((e) => typeof e.query.token === 'string')).toBe(true);
    await expectRecordsToMatchDrives(stack);
    const deletedRecords = await readRecords(stack, 'File', 'deleted');
    expect(deletedRecords.map((r) => r.id).sort()).toEqual(expect.arrayContaining(deleted.sort()));
  });

  test('user-files: a renamed folder re-enumerates, so paths under it are right', async () => {
    const drive = stack.graph.drives()[0].id as string;
    const folder = (stack.graph.items(drive) as any[]).find((i) => i.folder && !i.root && i.folder.childCount > 0);
    stack.graph.renameItem(folder.id, `${folder.name} (renamed)`);
    await runSync(stack, 'one-drive', CONN, 'user-files');
    await expectRecordsToMatchDrives(stack);
  });

  test('user-files: a 410 for an expired delta token recovers with a full resync', async () => {
    stack.graph.expireDeltaTokens();
    const gone = stack.graph.deleteItems(2);
    const summary = await runSync(stack, 'one-drive', CONN, 'user-files');
    expect(summary.result.File.deleted).toBe(gone.length);
    expect(stack.graph.requestLog().some((e) => e.status === 410)).toBe(true);
    await expectRecordsToMatchDrives(stack);
  });

  test('user-files: a burst of 429s is survived, each Retry-After respected', async () => {
    stack.graph.editFiles(2);
    stack.graph.resetStats();
    stack.graph.throttleNext(3, { status: 429, retryAfterSeconds: 1.2 });
    await runSync(stack, 'one-drive', CONN, 'user-files');
    const log = stack.graph.requestLog();
    const throttled = log.map((e, i) => ({ e, i })).filter(({ e }) => e.throttled);
    expect(throttled).toHaveLength(3);
    for (const { e, i } of throttled) expect(log[i + 1].at - e.at).toBeGreaterThanOrEqual(1_200);
    expect(stack.graph.stats().retryAfterViolations).toBe(0);
    await expectRecordsToMatchDrives(stack);
  });

  test('user-files/selected: picked files and folders; a vanished pick is deleted, not an error', async () => {
    const drive = stack.graph.drives()[0].id as string;
    const items = stack.graph.items(drive) as any[];
    const under = (id: string): string[] => items.filter((i) => i.parentReference?.id === id).flatMap((i) => [i.id, ...(i.folder ? under(i.id) : [])]);
    const folder = items.find((i) => i.folder && !i.root && i.folder.childCount > 1);
    const inside = new Set(under(folder.id));
    const outside = items.find((i) => i.file && !inside.has(i.id));
    await stack.client.POST('/connections/metadata', {
      body: {
        connection_id: CONN,
        provider_config_key: 'one-drive',
        metadata: { pickedFiles: [{ driveId: drive, fileIds: [folder.id, outside.id, 'NOPE0000000000000000'] }] },
      },
    });
    await runSync(stack, 'one-drive', CONN, 'user-files/selected');
    const expected = [folder.id, outside.id, ...under(folder.id)].sort();
    let records = await readRecords(stack, 'SelectedFile');
    expect(records.map((r) => r.id).sort()).toEqual(expected);

    stack.graph.deleteItems([outside.id]);
    const again = await runSync(stack, 'one-drive', CONN, 'user-files/selected');
    expect(again.result.SelectedFile.deleted).toBe(1);
    records = await readRecords(stack, 'SelectedFile', 'deleted');
    expect(records.map((r) => r.id)).toEqual([outside.id]);
  });
});
