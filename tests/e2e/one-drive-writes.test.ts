import { randomBytes } from 'node:crypto';
import { quickXorHash } from '../../sandbox/graph';
import { connectOneDrive, createOneDriveIntegration, runSync, startWeftStack, waitForLogs, type WeftStack } from '../support/weft-stack';
import { listRecords, triggerAction, type ActionInput, type ActionName } from '../../cli/api-client/client';

const CONN = 'od-writer';
const HEADERS = { 'connection-id': CONN, 'provider-config-key': 'one-drive' };

describe('OneDrive writes (upload-file, create-folder) and the next sync run', () => {
  let stack: WeftStack;
  let drive: string;

  /** POST /action/trigger through the typed client: input and output typed as the action's. */
  const trigger = <A extends ActionName>(action: A, input: ActionInput<A>, connectionId = CONN) =>
    triggerAction(stack.client, { action, input, connectionId, providerConfigKey: 'one-drive' });
  /** The same with input its action refuses (malformed on purpose, so untyped). */
  const triggerUntyped = (action: string, input: unknown) => stack.api('POST', '/action/trigger', { headers: HEADERS, body: { action_name: action, input } });
  const record = async (id: string) => {
    const page = await listRecords(stack.client, { model: 'File', connectionId: CONN, providerConfigKey: 'one-drive', ids: [id] });
    return page.records[0];
  };
  /** The bytes Graph holds for the item, read through fetch-file's download URL. */
  const download = async (id: string) => {
    const res = await trigger('fetch-file', { driveId: drive, itemId: id });
    expect(res.response.status).toBe(200);
    return Buffer.from(await (await fetch(res.data!.download_url)).arrayBuffer());
  };

  beforeAll(async () => {
    stack = await startWeftStack({ graph: { seed: 23, drives: [{ fileCount: 40 }] }, temporalCallTimeoutMs: 10_000 });
    await createOneDriveIntegration(stack);
    expect((await connectOneDrive(stack, CONN)).status).toBe(201);
    await stack.waitForSync(CONN, 'user-files', { providerConfigKey: 'one-drive' });
    drive = stack.graph.drives()[0].id as string;
  });
  afterAll(async () => stack?.shutdown());

  test('a small file in one PUT, a larger one through an upload session, a folder: in GET /records at once, unchanged for the next run', async () => {
    stack.graph.resetStats();
    const small = Buffer.from('quarterly numbers\n'.repeat(100));
    const smallRes = await trigger('upload-file', { driveId: drive, fileName: 'notes.txt', content: small.toString('base64') });
    expect(smallRes.response.status).toBe(200);
    const smallFile = smallRes.data!;
    expect(smallFile).toMatchObject({
      name: 'notes.txt',
      path: '/notes.txt',
      drive_id: drive,
      is_folder: false,
      size: small.length,
      hashes: { quickXorHash: quickXorHash(small) },
    });

    const large = randomBytes(1024 * 1024); // the most upload-file takes: 3 fragments of 320 KiB and one of 64 KiB
    const largeRes = await trigger('upload-file', { driveId: drive, fileName: 'scan.bin', content: large.toString('base64'), conflictBehavior: 'fail' });
    expect(largeRes.response.status).toBe(200);
    const largeFile = largeRes.data!;
    expect(largeFile).toMatchObject({ name: 'scan.bin', path: '/scan.bin', size: large.length, hashes: { quickXorHash: quickXorHash(large) } });

    const folderRes = await trigger('create-folder', { driveId: drive, name: 'Reports' });
    expect(folderRes.response.status).toBe(200);
    const reports = folderRes.data!;
    expect(reports).toMatchObject({ name: 'Reports', path: '/Reports', is_folder: true, size: 0 });

    // Graph holds exactly those bytes and that folder.
    expect((await download(smallFile.id)).equals(small)).toBe(true);
    expect((await download(largeFile.id)).equals(large)).toBe(true);
    expect(stack.graph.getItem(drive, reports.id)).toMatchObject({ name: 'Reports', folder: { childCount: 0 } });

    // The calls Graph saw: one PUT for the small file; a session and four fragments (no bearer on the upload URL, or it answers 401) for the large one.
    const writes = stack.graph.requestLog().filter((e) => e.method !== 'GET');
    expect(writes.map((e) => [e.method, e.path.replace(drive, 'D').replace(/^\/v1\.0/, ''), e.status])).toEqual([
      ['PUT', '/drives/D/root:/notes.txt:/content', 201],
      ['POST', '/drives/D/root:/scan.bin:/createUploadSession', 200],
      ['PUT', '/_upload/session', 202],
      ['PUT', '/_upload/session', 202],
      ['PUT', '/_upload/session', 202],
      ['PUT', '/_upload/session', 201],
      ['POST', '/drives/D/root/children', 201],
    ]);
    // Weft's request log has them under the action's operation, the upload URL's tempauth redacted.
    const logged = await waitForLogs(stack, `connection_id=${CONN}&operation=action:upload-file&limit=20`, 5);
    expect(logged.map((e) => [e.method, e.status])).toEqual(
      expect.arrayContaining([
        ['PUT', 201],
        ['POST', 200],
        ['PUT', 202],
      ]),
    );
    expect(JSON.stringify(logged)).not.toMatch(/tempauth=(?!REDACTED)/);

    // GET /records shows each at once, before any sync run.
    for (const written of [smallFile, largeFile, reports]) expect(await record(written.id)).toMatchObject(written);

    // The next run sees the three in Graph's delta and finds them as the actions saved them.
    const run = await runSync(stack, 'one-drive', CONN, 'user-files');
    expect(run.result.File).toEqual({ added: 0, updated: 0, deleted: 0 });
    for (const written of [smallFile, largeFile, reports]) {
      const saved = await record(written.id);
      expect(saved).toMatchObject(written);
      expect(saved._weft_metadata.deleted_at).toBeNull();
    }
  }, 30_000);

  test('a file into a folder by path: the run counts the folder (its size changed), not the file', async () => {
    const folder = await trigger('create-folder', { driveId: drive, parentPath: '/', name: 'Invoices' });
    expect(folder.response.status).toBe(200);
    const invoices = folder.data!;
    await runSync(stack, 'one-drive', CONN, 'user-files');

    const bytes = Buffer.from('invoice 42');
    const file = await trigger('upload-file', { driveId: drive, parentPath: '/Invoices', fileName: 'inv-42.txt', content: bytes.toString('base64') });
    expect(file.response.status).toBe(200);
    const invoice = file.data!;
    expect(invoice).toMatchObject({ path: '/Invoices/inv-42.txt', parent_id: invoices.id, size: bytes.length });
    const run = await runSync(stack, 'one-drive', CONN, 'user-files');
    expect(run.result.File).toEqual({ added: 0, updated: 1, deleted: 0 });
    expect(await record(invoices.id)).toMatchObject({ size: bytes.length });
    expect(await record(invoice.id)).toMatchObject(invoice);
  }, 20_000);

  test('at their own endpoints: POST /v1/create-folder, POST /v1/upload-file; a GET does not run a write', async () => {
    const folder = await stack.client.POST('/v1/create-folder', { params: { header: HEADERS }, body: { driveId: drive, name: 'Via Endpoint' } });
    expect(folder.response.status).toBe(200);
    expect(folder.data).toMatchObject({ name: 'Via Endpoint', path: '/Via Endpoint', is_folder: true });
    const file = await stack.client.POST('/v1/upload-file', {
      params: { header: HEADERS },
      body: { driveId: drive, parentId: folder.data!.id, fileName: 'a.txt', content: Buffer.from('a').toString('base64') },
    });
    expect(file.response.status).toBe(200);
    expect(file.data).toMatchObject({ path: '/Via Endpoint/a.txt', size: 1 });

    stack.graph.resetStats();
    // Routes the document does not have: the untyped helper.
    const viaGet = await stack.api('GET', `/v1/create-folder?driveId=${encodeURIComponent(drive)}&name=Nope`, { headers: HEADERS });
    expect(viaGet.status).toBe(404);
    expect(viaGet.body.error.code).toBe('unknown_operation');
    expect(viaGet.body.error.message).toBe('/v1/create-folder is the write action create-folder: POST its input as the JSON body.');
    const readViaPost = await stack.api('POST', '/v1/list-drives', { headers: HEADERS, body: {} });
    expect(readViaPost.status).toBe(404);
    expect(stack.graph.requestLog()).toEqual([]);
  }, 20_000);

  test('bad input is 400 invalid_action_input and writes nothing', async () => {
    stack.graph.resetStats();
    const before = stack.graph.items(drive).length;
    const bad: Array<[string, unknown]> = [
      ['upload-file', { driveId: drive, fileName: 'a.txt', content: 'not base64!' }],
      ['upload-file', { driveId: drive, fileName: 'big.bin', content: Buffer.alloc(1024 * 1024 + 1).toString('base64') }],
      ['upload-file', { driveId: drive, fileName: 'a:b.txt', content: 'aGk=' }],
      ['upload-file', { driveId: drive, fileName: 'a.txt', content: 'aGk=', conflictBehavior: 'overwrite' }],
      ['upload-file', { driveId: drive, parentId: 'x', parentPath: '/Reports', fileName: 'a.txt', content: 'aGk=' }],
      ['create-folder', { driveId: drive, name: 'trailing.' }],
      ['create-folder', { driveId: drive, parentPath: '/Re:ports', name: 'x' }],
      ['create-folder', { name: 'x' }],
    ];
    for (const [action, input] of bad) {
      const res = await triggerUntyped(action, input);
      expect([action, res.status, res.body.error?.code]).toEqual([action, 400, 'invalid_action_input']);
    }
    expect(stack.graph.requestLog()).toEqual([]);
    expect(stack.graph.items(drive).length).toBe(before);
  }, 20_000);

  test("a name taken with conflictBehavior fail: 409 name_already_exists with Graph's answer, nothing changed; replace keeps the id; rename picks a free name", async () => {
    const original = stack.graph.items(drive).find((i: any) => i.name === 'notes.txt') as any;
    const upload = await trigger('upload-file', { driveId: drive, fileName: 'notes.txt', content: 'aGk=', conflictBehavior: 'fail' });
    expect(upload.response.status).toBe(409);
    expect(upload.error?.error).toMatchObject({ code: 'name_already_exists', upstream: { status: 409, body: { error: { code: 'nameAlreadyExists' } } } });
    expect(stack.graph.getItem(drive, original.id)).toMatchObject({ size: original.size, eTag: original.eTag });

    // replace writes over the same item (same id), and its record follows at once.
    const replaced = await trigger('upload-file', { driveId: drive, fileName: 'notes.txt', content: 'aGk=', conflictBehavior: 'replace' });
    expect(replaced.response.status).toBe(200);
    expect(replaced.data).toMatchObject({ id: original.id, size: 2, hashes: { quickXorHash: quickXorHash(Buffer.from('hi')) } });
    expect(await record(original.id)).toMatchObject({ size: 2, etag: replaced.data!.etag });

    const folder = await trigger('create-folder', { driveId: drive, name: 'reports', conflictBehavior: 'fail' });
    expect(folder.response.status).toBe(409);
    expect(folder.error?.error.code).toBe('name_already_exists');

    const renamed = await trigger('create-folder', { driveId: drive, name: 'Reports', conflictBehavior: 'rename' });
    expect(renamed.response.status).toBe(200);
    expect(renamed.data).toMatchObject({ name: 'Reports (2)', path: '/Reports (2)' });
    const missing = await trigger('create-folder', { driveId: drive, parentId: 'no-such-item', name: 'x' });
    expect(missing.response.status).toBe(404);
    expect(missing.error?.error.code).toBe('parent_not_found');
  }, 20_000);

  test('a connection granted read permissions only: 403 write_access_denied, nothing written', async () => {
    stack.graph.addAccessToken('read-only-token', { scopes: ['Files.Read.All', 'User.Read'] });
    expect((await connectOneDrive(stack, 'od-reader', 'read-only-token')).status).toBe(201);
    const before = stack.graph.items(drive).length;
    const res = await trigger('create-folder', { driveId: drive, name: 'Not Allowed' }, 'od-reader');
    expect(res.response.status).toBe(403);
    expect(res.error?.error).toMatchObject({ code: 'write_access_denied', upstream: { status: 403, body: { error: { code: 'accessDenied' } } } });
    expect(stack.graph.items(drive).length).toBe(before);
  }, 20_000);
});
