import { createGraphSimulator, GRAPH_DEFAULT_ACCESS_TOKEN, quickXorHash, type GraphSimulator } from '../../sandbox/graph';

type Json = Record<string, any>;
const AUTH = { authorization: `Bearer ${GRAPH_DEFAULT_ACCESS_TOKEN}` };
const KIB320 = 327_680;

let sim: GraphSimulator;
let api: string;
let drive: string;
let root: string;

beforeEach(async () => {
  sim = createGraphSimulator({ seed: 5, drives: [{ fileCount: 20 }] });
  api = `${await sim.start()}/v1.0`;
  drive = sim.drives()[0].id as string;
  root = (sim.items(drive)[0] as Json).id;
});
afterEach(async () => sim.stop());

async function call(method: string, url: string, opts: { body?: Buffer | string; json?: unknown; headers?: Record<string, string>; auth?: boolean } = {}) {
  const headers: Record<string, string> = { ...(opts.auth === false ? {} : AUTH), ...opts.headers };
  let body: Buffer | string | undefined = opts.body;
  if (opts.json !== undefined) {
    body = JSON.stringify(opts.json);
    headers['content-type'] = 'application/json';
  }
  const res = await fetch(url, { method, headers, body });
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as Json) : null };
}

/** Follows a drive's delta from the start and returns its deltaLink. */
async function deltaLinkNow(): Promise<string> {
  let next: string | undefined = `${api}/drives/${drive}/root/delta`;
  let link = '';
  while (next) {
    const page = await call('GET', next);
    next = page.body!['@odata.nextLink'];
    link = page.body!['@odata.deltaLink'] ?? link;
  }
  return link;
}

test('a simple upload creates the file (201) with its real hash, downloads intact and comes in the next delta', async () => {
  const link = await deltaLinkNow();
  const bytes = Buffer.from('hello, graph\n'.repeat(1000));
  const put = await call('PUT', `${api}/drives/${drive}/items/${root}:/${encodeURIComponent('notes é.txt')}:/content`, { body: bytes });
  expect(put.status).toBe(201);
  expect(put.body).toMatchObject({ name: 'notes é.txt', size: bytes.length, file: { hashes: { quickXorHash: quickXorHash(bytes) } } });
  expect(put.body!.parentReference).toMatchObject({ driveId: drive, id: root, path: `/drives/${drive}/root:` });

  const item = await call('GET', `${api}/drives/${drive}/items/${put.body!.id}`);
  const download = await fetch(item.body!['@microsoft.graph.downloadUrl']);
  expect(Buffer.from(await download.arrayBuffer()).equals(bytes)).toBe(true);

  const changes = await call('GET', link);
  const ids = changes.body!.value.map((i: Json) => i.id);
  expect(ids).toEqual(expect.arrayContaining([put.body!.id, root]));

  // The same name again: replace (the default) keeps the id and answers 200; fail is 409; rename picks a free name.
  const again = await call('PUT', `${api}/drives/${drive}/items/${root}:/notes%20%C3%A9.txt:/content`, { body: Buffer.from('v2') });
  expect(again).toMatchObject({ status: 200, body: { id: put.body!.id, size: 2 } });
  const fail = await call('PUT', `${api}/drives/${drive}/items/${root}:/notes%20%C3%A9.txt:/content?@microsoft.graph.conflictBehavior=fail`, { body: 'x' });
  expect(fail.status).toBe(409);
  expect(fail.body!.error).toMatchObject({ code: 'nameAlreadyExists' });
  const renamed = await call('PUT', `${api}/drives/${drive}/items/${root}:/notes%20%C3%A9.txt:/content?@microsoft.graph.conflictBehavior=rename`, {
    body: 'x',
  });
  expect(renamed).toMatchObject({ status: 201, body: { name: 'notes é (2).txt' } });
});

test('an upload session takes 320 KiB fragments (202 + nextExpectedRanges) and creates the file with the last one', async () => {
  const bytes = Buffer.alloc(KIB320 * 2 + 1000);
  for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 31) & 0xff;
  const created = await call('POST', `${api}/drives/${drive}/items/${root}:/big.bin:/createUploadSession`, {
    json: { item: { '@microsoft.graph.conflictBehavior': 'fail' } },
  });
  expect(created.status).toBe(200);
  expect(created.body!.nextExpectedRanges).toEqual(['0-']);
  const url: string = created.body!.uploadUrl;

  const fragment = (start: number, end: number, headers: Record<string, string> = {}) =>
    call('PUT', url, { auth: false, body: bytes.subarray(start, end + 1), headers: { 'content-range': `bytes ${start}-${end}/${bytes.length}`, ...headers } });

  // The URL is pre-authenticated: a bearer token is refused.
  expect((await call('PUT', url, { body: bytes.subarray(0, KIB320), headers: { 'content-range': `bytes 0-${KIB320 - 1}/${bytes.length}` } })).status).toBe(401);
  // Not a multiple of 320 KiB (and not the last): refused.
  expect((await fragment(0, 999)).status).toBe(400);
  const first = await fragment(0, KIB320 - 1);
  expect(first).toMatchObject({ status: 202, body: { nextExpectedRanges: [`${KIB320}-`] } });
  // A fragment that does not start where the last ended.
  expect((await fragment(0, KIB320 - 1)).status).toBe(416);
  expect((await fragment(KIB320, 2 * KIB320 - 1)).status).toBe(202);
  const last = await fragment(2 * KIB320, bytes.length - 1);
  expect(last.status).toBe(201);
  expect(last.body).toMatchObject({ name: 'big.bin', size: bytes.length, file: { hashes: { quickXorHash: quickXorHash(bytes) } } });
  expect(sim.getItem(drive, last.body!.id)).toMatchObject({ size: bytes.length });
  // Completed: the URL is gone.
  expect((await call('GET', url, { auth: false })).status).toBe(404);

  // With fail, an existing name is refused when the session is created.
  const taken = await call('POST', `${api}/drives/${drive}/items/${root}:/big.bin:/createUploadSession`, {
    json: { item: { '@microsoft.graph.conflictBehavior': 'fail' } },
  });
  expect(taken.status).toBe(409);
  expect(taken.body!.error.code).toBe('nameAlreadyExists');
});

test('folders: 201 with the folder facet; an existing name with fail is 409 nameAlreadyExists; bad bodies are 400', async () => {
  const made = await call('POST', `${api}/drives/${drive}/items/${root}/children`, {
    json: { name: 'Reports', folder: {}, '@microsoft.graph.conflictBehavior': 'fail' },
  });
  expect(made).toMatchObject({ status: 201, body: { name: 'Reports', folder: { childCount: 0 }, size: 0 } });
  const inside = await call('PUT', `${api}/drives/${drive}/root:/Reports/q1.txt:/content`, { body: 'q1' });
  expect(inside.status).toBe(201);
  expect(sim.getItem(drive, made.body!.id)).toMatchObject({ folder: { childCount: 1 }, size: 2 });

  const clash = await call('POST', `${api}/drives/${drive}/items/${root}/children`, {
    json: { name: 'reports', folder: {}, '@microsoft.graph.conflictBehavior': 'fail' },
  });
  expect(clash.status).toBe(409);
  expect(clash.body!.error).toMatchObject({ code: 'nameAlreadyExists' });
  const renamed = await call('POST', `${api}/drives/${drive}/items/${root}/children`, {
    json: { name: 'Reports', folder: {}, '@microsoft.graph.conflictBehavior': 'rename' },
  });
  expect(renamed).toMatchObject({ status: 201, body: { name: 'Reports (2)' } });

  const before = sim.items(drive).length;
  expect((await call('POST', `${api}/drives/${drive}/items/${root}/children`, { json: { name: 'a:b', folder: {} } })).status).toBe(400);
  expect((await call('POST', `${api}/drives/${drive}/items/${root}/children`, { json: { name: 'x' } })).status).toBe(400);
  expect(
    (await call('POST', `${api}/drives/${drive}/items/${root}/children`, { json: { name: 'x', folder: {}, '@microsoft.graph.conflictBehavior': 'merge' } }))
      .status,
  ).toBe(400);
  expect((await call('POST', `${api}/drives/${drive}/items/nope/children`, { json: { name: 'x', folder: {} } })).status).toBe(404);
  expect((await call('POST', `${api}/drives/${drive}/items/${root}/children`, { json: { name: 'x', folder: {} }, auth: false })).status).toBe(401);
  // A token granted read permissions only reads, and every write is 403 accessDenied.
  sim.addAccessToken('read-only', { scopes: ['Files.Read.All', 'User.Read'] });
  const ro = { authorization: 'Bearer read-only' };
  expect((await call('GET', `${api}/drives/${drive}/root`, { auth: false, headers: ro })).status).toBe(200);
  const denied = await call('POST', `${api}/drives/${drive}/items/${root}/children`, { json: { name: 'x', folder: {} }, auth: false, headers: ro });
  expect(denied.status).toBe(403);
  expect(denied.body!.error.code).toBe('accessDenied');
  expect((await call('PUT', `${api}/drives/${drive}/root:/x.txt:/content`, { body: 'x', auth: false, headers: ro })).status).toBe(403);
  expect(sim.items(drive).length).toBe(before);
});
