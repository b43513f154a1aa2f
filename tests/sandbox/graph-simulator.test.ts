import {
  createGraphSimulator,
  GRAPH_DEFAULT_ACCESS_TOKEN,
  GraphSimulatorOptionsSchema,
  quickXorHash,
  type GraphSimulator,
  type GraphSimulatorOptions,
} from '../../sandbox/graph';

const TOKEN = GRAPH_DEFAULT_ACCESS_TOKEN;

type Json = Record<string, any>;

const running: GraphSimulator[] = [];

async function startSim(options: GraphSimulatorOptions = {}): Promise<{ sim: GraphSimulator; base: string; api: string }> {
  const sim = createGraphSimulator(options);
  running.push(sim);
  const base = await sim.start();
  return { sim, base, api: `${base}/v1.0` };
}

afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.stop()));
});

/** GET with the bearer token (null = no Authorization header); `url` is absolute. */
function get(url: string, token: string | null = TOKEN, headers: Record<string, string> = {}): Promise<Response> {
  const h: Record<string, string> = { ...headers };
  if (token !== null) h.authorization = `Bearer ${token}`;
  return fetch(url, { headers: h, redirect: 'manual' });
}

async function getJson(url: string, token: string | null = TOKEN): Promise<{ res: Response; body: Json }> {
  const res = await get(url, token);
  return { res, body: (await res.json()) as Json };
}

/** Follows `@odata.nextLink` verbatim until it is absent; returns every item. */
async function collectPages(url: string): Promise<{ items: Json[]; pages: Json[] }> {
  const items: Json[] = [];
  const pages: Json[] = [];
  let next: string | undefined = url;
  while (next) {
    const { res, body } = await getJson(next);
    expect(res.status).toBe(200);
    pages.push(body);
    items.push(...body.value);
    next = body['@odata.nextLink'];
    if (pages.length > 100_000) throw new Error('paging does not terminate');
  }
  return { items, pages };
}

/**
 * Follows a delta round (nextLinks until the deltaLink). Asserts every page carries exactly
 * one of nextLink / deltaLink. `between` runs after each page that has a nextLink.
 */
async function deltaRound(url: string, between?: (page: number) => void): Promise<{ items: Json[]; pages: number; deltaLink: string }> {
  const items: Json[] = [];
  let next = url;
  for (let pages = 1; ; pages++) {
    const { res, body } = await getJson(next);
    if (res.status !== 200) throw new Error(`delta page ${pages}: HTTP ${res.status} ${JSON.stringify(body)}`);
    items.push(...body.value);
    const nextLink = body['@odata.nextLink'];
    const deltaLink = body['@odata.deltaLink'];
    if ((nextLink === undefined) === (deltaLink === undefined)) {
      throw new Error(`page ${pages} must have exactly one of nextLink/deltaLink: ${Object.keys(body).join(',')}`);
    }
    if (deltaLink) return { items, pages, deltaLink };
    between?.(pages);
    next = nextLink;
  }
}

function ids(items: Json[]): string[] {
  return items.map((i) => i.id as string);
}

const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const INNER_DATE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/;

function expectGraphError(res: Response, body: Json, status: number, code: string): void {
  expect(res.status).toBe(status);
  expect(Object.keys(body)).toEqual(['error']);
  expect(body.error.code).toBe(code);
  expect(typeof body.error.message).toBe('string');
  expect(body.error.innerError.date).toMatch(INNER_DATE);
  expect(body.error.innerError['request-id']).toMatch(GUID);
  expect(body.error.innerError['client-request-id']).toEqual(expect.any(String));
  expect(res.headers.get('request-id')).toBe(body.error.innerError['request-id']);
}

describe('Graph simulator: options', () => {
  it('applies defaults and rejects unknown or inconsistent options', () => {
    const o = GraphSimulatorOptionsSchema.parse({});
    expect(o).toMatchObject({
      seed: 1,
      drives: [{ fileCount: 200, driveType: 'business' }],
      accessTokens: [TOKEN],
      defaultPageSize: 200,
      maxPageSize: 1000,
      downloadUrlTtlMs: 3_600_000,
      latencyMs: 0,
      enforceRetryAfter: true,
    });
    expect(() => GraphSimulatorOptionsSchema.parse({ bogus: 1 })).toThrow();
    expect(() => GraphSimulatorOptionsSchema.parse({ drives: [{ fileCount: 1, color: 'red' }] })).toThrow();
    expect(() => GraphSimulatorOptionsSchema.parse({ defaultPageSize: 50, maxPageSize: 10 })).toThrow();
  });
});

describe('Graph simulator: authentication and errors', () => {
  it('answers 401 InvalidAuthenticationToken for a missing, unknown or revoked token', async () => {
    const { sim, api } = await startSim({ drives: [{ fileCount: 10 }] });

    const missing = await getJson(`${api}/me`, null);
    expectGraphError(missing.res, missing.body, 401, 'InvalidAuthenticationToken');
    expect(missing.body.error.message).toBe('Access token is empty.');
    expect(missing.res.headers.get('www-authenticate')).toMatch(/^Bearer /);

    const unknown = await getJson(`${api}/me/drive`, 'not-a-token');
    expectGraphError(unknown.res, unknown.body, 401, 'InvalidAuthenticationToken');
    expect(unknown.body.error.message).toBe('Access token has expired or is not yet valid.');

    sim.addAccessToken('issued-later');
    expect((await get(`${api}/me`, 'issued-later')).status).toBe(200);
    sim.revokeAccessToken('issued-later');
    expect((await get(`${api}/me`, 'issued-later')).status).toBe(401);

    // The download URL needs no token, but every API route does.
    const item = sim.items().find((i) => i.file)!;
    expect((await get(`${api}/me/drive/items/${item.id}`, null)).status).toBe(401);

    // Tokens never reach the request log.
    expect(JSON.stringify(sim.requestLog())).not.toContain('issued-later');
    expect(JSON.stringify(sim.requestLog())).not.toContain(TOKEN);
  });

  it('echoes client-request-id and answers unknown routes, methods, items and options like Graph', async () => {
    const { sim, api, base } = await startSim({ drives: [{ fileCount: 10 }] });

    const echoed = await get(`${api}/me/drive/items/nope`, TOKEN, { 'client-request-id': 'abc-123' });
    const echoedBody = (await echoed.json()) as Json;
    expectGraphError(echoed, echoedBody, 404, 'itemNotFound');
    expect(echoed.headers.get('client-request-id')).toBe('abc-123');
    expect(echoedBody.error.innerError['client-request-id']).toBe('abc-123');

    const route = await getJson(`${api}/me/unicorns`);
    expectGraphError(route.res, route.body, 400, 'BadRequest');

    const version = await getJson(`${base}/v2.0/me`);
    expectGraphError(version.res, version.body, 400, 'BadRequest');

    // POST to children creates a folder (graph-writes.test.ts); PATCH on a collection is no method of it.
    const patch = await fetch(`${api}/me/drive/root/children`, { method: 'PATCH', headers: { authorization: `Bearer ${TOKEN}` }, body: '{}' });
    expectGraphError(patch, (await patch.json()) as Json, 405, 'BadRequest');

    const path = await getJson(`${api}/me/drive/root:/No/Such/File.txt`);
    expectGraphError(path.res, path.body, 404, 'itemNotFound');

    const drive = await getJson(`${api}/drives/b!nope`);
    expectGraphError(drive.res, drive.body, 404, 'itemNotFound');

    const select = await getJson(`${api}/me/drive/root?$select=id,colour`);
    expectGraphError(select.res, select.body, 400, 'BadRequest');

    const top = await getJson(`${api}/me/drive/root/children?$top=0`);
    expectGraphError(top.res, top.body, 400, 'invalidRequest');

    const skip = await getJson(`${api}/me/drive/root/children?$skiptoken=garbage`);
    expectGraphError(skip.res, skip.body, 400, 'invalidRequest');

    const orderby = await getJson(`${api}/me/drive/root/children?$orderby=name`);
    expectGraphError(orderby.res, orderby.body, 400, 'invalidRequest');

    // beta is served too.
    expect((await get(`${base}/beta/me/drive/root`)).status).toBe(200);
    expect(sim.stats().byStatus[400]).toBe(6);
  });

  it('injects failures with Graph error bodies (failNext)', async () => {
    const { sim, api } = await startSim({ drives: [{ fileCount: 10 }] });
    sim.failNext(1);
    const general = await getJson(`${api}/me/drive`);
    expectGraphError(general.res, general.body, 500, 'generalException');

    sim.failNext(2, 503);
    for (let k = 0; k < 2; k++) {
      const r = await getJson(`${api}/me/drive`);
      expectGraphError(r.res, r.body, 503, 'serviceNotAvailable');
    }
    sim.failNext(1, 504);
    expect((await get(`${api}/me/drive`)).status).toBe(504);
    // Unauthenticated requests do not consume injections.
    sim.failNext(1, 502);
    expect((await get(`${api}/me/drive`, null)).status).toBe(401);
    expect((await get(`${api}/me/drive`)).status).toBe(502);
    expect((await get(`${api}/me/drive`)).status).toBe(200);
  });

  it('delays responses by the configured latency', async () => {
    const { sim, api } = await startSim({ drives: [{ fileCount: 5 }] });
    sim.setLatency(80);
    const t = performance.now();
    expect((await get(`${api}/me`)).status).toBe(200);
    expect(performance.now() - t).toBeGreaterThanOrEqual(70);
  });
});

describe('Graph simulator: user, drives and sites', () => {
  it('serves /me, /me/drives (paged), /me/drive, /drives/{id} and /sites/root', async () => {
    const { sim, api } = await startSim({
      seed: 4,
      drives: [{ fileCount: 30 }, { fileCount: 5, driveType: 'documentLibrary', name: 'Team Docs' }, { fileCount: 5, driveType: 'personal' }],
    });

    const me = await getJson(`${api}/me`);
    expect(me.res.status).toBe(200);
    expect(me.res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(me.body).toMatchObject({ id: expect.stringMatching(GUID), displayName: expect.any(String) });
    expect(me.body.userPrincipalName).toMatch(/^[a-z.]+@[a-z]+\.onmicrosoft\.com$/);
    expect(me.body.mail).toMatch(/^[a-z.]+@[a-z]+\.com$/);
    expect(me.body['@odata.context']).toContain('$metadata#users/$entity');

    const all = await getJson(`${api}/me/drives`);
    expect(all.body['@odata.context']).toContain('$metadata#drives');
    expect(all.body['@odata.nextLink']).toBeUndefined();
    expect(all.body.value).toHaveLength(3);
    expect(all.body.value).toEqual(sim.drives());
    const [business, library, personal] = all.body.value;
    for (const d of all.body.value) {
      expect(Object.keys(d).sort()).toEqual(
        ['createdDateTime', 'description', 'driveType', 'id', 'lastModifiedDateTime', 'name', 'owner', 'quota', 'webUrl'].sort(),
      );
      expect(d.owner.user).toEqual({ email: expect.any(String), id: expect.any(String), displayName: expect.any(String) });
      expect(Object.keys(d.quota).sort()).toEqual(['deleted', 'remaining', 'state', 'total', 'used']);
      expect(d.quota.state).toBe('normal');
      expect(d.quota.remaining).toBe(d.quota.total - d.quota.used - d.quota.deleted);
    }
    expect(business).toMatchObject({ driveType: 'business', name: 'OneDrive' });
    expect(business.id).toMatch(/^b![A-Za-z0-9_-]{64}$/);
    expect(business.webUrl).toMatch(/^https:\/\/[a-z]+-my\.sharepoint\.com\/personal\/.+\/Documents$/);
    expect(library).toMatchObject({ driveType: 'documentLibrary', name: 'Team Docs' });
    expect(library.webUrl).toMatch(/^https:\/\/[a-z]+\.sharepoint\.com\/sites\/.+\/Shared%20Documents$/);
    expect(personal.driveType).toBe('personal');
    expect(personal.id).toMatch(/^[0-9a-f]{16}$/);

    // Paging with $top: follow nextLink verbatim.
    const { items: paged, pages } = await collectPages(`${api}/me/drives?$top=1`);
    expect(pages).toHaveLength(3);
    expect(pages[0]['@odata.nextLink']).toMatch(/\$top=1&\$skiptoken=[A-Za-z0-9_-]+$/);
    expect(ids(paged)).toEqual(ids(all.body.value));

    const mine = await getJson(`${api}/me/drive`);
    expect(mine.body.id).toBe(business.id);
    const byId = await getJson(`${api}/drives/${encodeURIComponent(library.id)}`);
    expect(byId.body).toMatchObject(library);
    const selected = await getJson(`${api}/drives/${library.id}?$select=id,driveType`);
    expect(selected.body).toEqual({ '@odata.context': expect.any(String), id: library.id, driveType: 'documentLibrary' });

    const site = await getJson(`${api}/sites/root`);
    expect(site.body.id).toMatch(/^[a-z]+\.sharepoint\.com,[0-9a-f-]{36},[0-9a-f-]{36}$/);
    expect(site.body.siteCollection.hostname).toBe(site.body.id.split(',')[0]);
    expect(site.body).toMatchObject({ name: expect.any(String), displayName: expect.any(String), webUrl: `https://${site.body.siteCollection.hostname}` });
    const siteDrives = await getJson(`${api}/sites/root/drives`);
    expect(ids(siteDrives.body.value)).toEqual([library.id]);
  });
});

describe('Graph simulator: items and children', () => {
  it('serves driveItems by id, root and path with realistic facets', async () => {
    const { sim, api } = await startSim({ seed: 7, drives: [{ fileCount: 300 }] });
    const [drive] = sim.drives();
    const all = sim.items();
    expect(all).toHaveLength(1 + 12 + 300);

    const root = await getJson(`${api}/me/drive/root`);
    expect(root.res.status).toBe(200);
    expect(root.body.root).toEqual({});
    expect(root.body.name).toBe('root');
    expect(root.body.folder.childCount).toBeGreaterThan(0);
    expect(root.body.parentReference).toEqual({ driveType: 'business', driveId: drive.id });
    expect((await getJson(`${api}/drives/${drive.id}/root`)).body.id).toBe(root.body.id);

    // A file two folders deep, addressed four ways.
    const file = all.find((i) => i.file && (i.parentReference.path as string).split('/').length >= 4)!;
    expect(file).toBeDefined();
    const displayPath = `${(file.parentReference.path as string).replace(/^[^:]*:/, '')}/${file.name}`;
    const viaMe = await getJson(`${api}/me/drive/items/${file.id}`);
    const viaDrives = await getJson(`${api}/drives/${drive.id}/items/${file.id}`);
    const encodedPath = displayPath.split('/').map(encodeURIComponent).join('/');
    const viaPath = await getJson(`${api}/drives/${drive.id}/root:${encodedPath}`);
    const viaPathColon = await getJson(`${api}/me/drive/root:${encodedPath}:`);
    for (const r of [viaMe, viaDrives, viaPath, viaPathColon]) {
      expect(r.res.status).toBe(200);
      expect(r.body.id).toBe(file.id);
    }
    // parentReference.path echoes the addressing: /drive/root: under /me/drive, /drives/{id}/root: under /drives.
    expect(viaMe.body.parentReference.path).toBe(file.parentReference.path);
    expect(viaMe.body.parentReference.path).toMatch(/^\/drive\/root:\//);
    expect(viaDrives.body.parentReference.path).toBe(`/drives/${drive.id}/root:${displayPath.slice(0, -(file.name.length + 1))}`);

    const item = viaMe.body;
    expect(item['@odata.context']).toContain(`$metadata#drives('${drive.id}')/items/$entity`);
    expect(item.id).toMatch(/^01[A-Z2-7]{32}$/);
    expect(item.eTag).toMatch(/^"\{[0-9A-F-]{36}\},\d+"$/);
    expect(item.cTag).toMatch(/^"c:\{[0-9A-F-]{36}\},\d+"$/);
    expect(item.file.mimeType).toEqual(expect.any(String));
    expect(item.file.hashes.quickXorHash).toMatch(/^[A-Za-z0-9+/]{27}=$/);
    expect(item.size).toBeGreaterThanOrEqual(0);
    expect(item.createdDateTime).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
    expect(Date.parse(item.lastModifiedDateTime)).toBeGreaterThanOrEqual(Date.parse(item.createdDateTime));
    expect(item.fileSystemInfo).toEqual({ createdDateTime: item.createdDateTime, lastModifiedDateTime: item.lastModifiedDateTime });
    expect(item.createdBy.user).toEqual({ email: expect.any(String), id: expect.stringMatching(GUID), displayName: expect.any(String) });
    expect(item.lastModifiedBy.user.displayName).toEqual(expect.any(String));
    expect(item.webUrl).toBe(`${drive.webUrl}${encodedPath}`);
    expect(item['@microsoft.graph.downloadUrl']).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/_download\//);
    const { ['@odata.context']: _ctx, ['@microsoft.graph.downloadUrl']: _url, ...rest } = item;
    expect(rest).toEqual(file);

    // Folders: childCount, no cTag on business drives, no download URL.
    const folder = all.find((i) => i.folder && !i.root)!;
    const f = (await getJson(`${api}/me/drive/items/${folder.id}`)).body;
    expect(f.folder.childCount).toBe(all.filter((i) => i.parentReference.id === folder.id).length);
    expect(f.cTag).toBeUndefined();
    expect(f['@microsoft.graph.downloadUrl']).toBeUndefined();
    expect(f.file).toBeUndefined();

    // Names are unique per folder (case-insensitive), as OneDrive requires.
    const seen = new Set<string>();
    for (const i of all) {
      const key = `${i.parentReference.id}/${(i.name as string).toLowerCase()}`;
      expect(seen.has(key)).toBe(false);
      seen.add(key);
    }

    // If-None-Match with the current eTag → 304.
    const notModified = await get(`${api}/me/drive/items/${file.id}`, TOKEN, { 'if-none-match': item.eTag });
    expect(notModified.status).toBe(304);
    sim.deleteItems([file.id]);
    const gone = await getJson(`${api}/me/drive/items/${file.id}`);
    expectGraphError(gone.res, gone.body, 404, 'itemNotFound');
  });

  it('pages children with nextLink and sees every item exactly once in a full tree walk', async () => {
    const { sim, api } = await startSim({ seed: 8, drives: [{ fileCount: 1_500 }] });
    const expected = sim.items();
    const seen: Json[] = [];
    let requests = 0;
    const walk = async (folderId: string) => {
      const { items, pages } = await collectPages(`${api}/me/drive/items/${folderId}/children?$top=7`);
      requests += pages.length;
      for (let p = 0; p < pages.length - 1; p++) {
        expect(pages[p].value).toHaveLength(7);
        expect(pages[p]['@odata.nextLink']).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1\.0\/me\/drive\/items\/[^/]+\/children\?\$top=7&\$skiptoken=/);
      }
      for (const item of items) {
        seen.push(item);
        expect(item.parentReference.id).toBe(folderId);
        if (item.folder) await walk(item.id);
      }
    };
    const root = (await getJson(`${api}/me/drive/root`)).body;
    seen.push(root);
    await walk(root.id);
    expect(requests).toBeGreaterThan(60);
    expect(ids(seen).sort()).toEqual(ids(expected).sort());
    expect(new Set(ids(seen)).size).toBe(seen.length);

    // The default page size is 200.
    sim.addFiles(250, { parentId: root.id });
    const first = await getJson(`${api}/me/drive/root/children`);
    expect(first.body.value).toHaveLength(200);
    expect(first.body['@odata.nextLink']).toContain('$skiptoken=');
    // Children of a file: an empty collection.
    const file = expected.find((i) => i.file)!;
    const none = await getJson(`${api}/drives/${sim.drives()[0].id}/items/${file.id}/children`);
    expect(none.res.status).toBe(200);
    expect(none.body.value).toEqual([]);
  });

  it('clamps $top to maxPageSize and keeps children paging stable when items change between pages', async () => {
    const { sim, api } = await startSim({ seed: 9, drives: [{ fileCount: 0 }], defaultPageSize: 20, maxPageSize: 50 });
    const rootId = sim.items()[0].id as string;
    const added = sim.addFiles(130, { parentId: rootId });
    expect((await getJson(`${api}/me/drive/root/children?$top=500`)).body.value).toHaveLength(50);
    expect((await getJson(`${api}/me/drive/root/children`)).body.value).toHaveLength(20);

    const seen: string[] = [];
    let next: string | undefined = `${api}/me/drive/root/children?$top=25&$select=id,name`;
    let page = 0;
    const deletedUnseen = new Set<string>();
    let addedLater: string[] = [];
    while (next) {
      const { body } = await getJson(next);
      for (const i of body.value) expect(Object.keys(i).sort()).toEqual(['id', 'name']);
      seen.push(...ids(body.value));
      next = body['@odata.nextLink'];
      if (++page === 2) {
        // Delete a seen item, the last seen one and two unseen ones; add new ones.
        const unseen = added.filter((id) => !seen.includes(id)).slice(0, 2);
        unseen.forEach((id) => deletedUnseen.add(id));
        sim.deleteItems([seen[0], seen[seen.length - 1], ...unseen]);
        addedLater = sim.addFiles(3, { parentId: rootId });
      }
    }
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen).toEqual([...added.filter((id) => !deletedUnseen.has(id)), ...addedLater]);
  });

  it('supports $select on items and children (downloadUrl selectable)', async () => {
    const { sim, api } = await startSim({ seed: 10, drives: [{ fileCount: 40 }] });
    const file = sim.items().find((i) => i.file)!;
    const one = await getJson(`${api}/me/drive/items/${file.id}?$select=id,name,size,@microsoft.graph.downloadUrl`);
    expect(Object.keys(one.body).sort()).toEqual(['@microsoft.graph.downloadUrl', '@odata.context', 'id', 'name', 'size']);
    const noUrl = await getJson(`${api}/me/drive/items/${file.id}?$select=id,file`);
    expect(Object.keys(noUrl.body).sort()).toEqual(['@odata.context', 'file', 'id']);
    const kids = await getJson(`${api}/me/drive/root/children?$select=id,folder`);
    for (const k of kids.body.value) expect(Object.keys(k).every((key) => key === 'id' || key === 'folder')).toBe(true);
  });
});

describe('Graph simulator: delta', () => {
  it('enumerates the drive (root first, parents before children, no paths) and then returns exactly the changes', async () => {
    let clock = Date.UTC(2025, 6, 1, 12);
    const { sim, api } = await startSim({ seed: 11, drives: [{ fileCount: 500 }], now: () => clock });
    const [drive] = sim.drives();
    const expected = sim.items();

    const round1 = await deltaRound(`${api}/drives/${drive.id}/root/delta?$top=90`);
    expect(round1.pages).toBe(Math.ceil(expected.length / 90));
    expect(round1.deltaLink).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:\\d+/v1\\.0/drives/${drive.id}/root/delta\\?\\$top=90&token=[A-Za-z0-9_-]+$`));
    expect(ids(round1.items).sort()).toEqual(ids(expected).sort());
    expect(round1.items[0].root).toEqual({});
    const position = new Map(round1.items.map((it, k) => [it.id, k]));
    for (const it of round1.items) {
      expect(it.parentReference.path).toBeUndefined();
      if (!it.root) expect(position.get(it.parentReference.id)!).toBeLessThan(position.get(it.id)!);
      if (it.file) expect(it['@microsoft.graph.downloadUrl']).toEqual(expect.any(String));
    }

    // Nothing changed: an empty change set and a new deltaLink.
    const quiet = await deltaRound(round1.deltaLink);
    expect(quiet.items).toEqual([]);

    // Changes.
    clock += 60_000;
    const files = expected.filter((i) => i.file);
    const folders = expected.filter((i) => i.folder && !i.root);
    const edited = sim.editFiles(3);
    const renamed = files.find((f) => !edited.includes(f.id))!;
    sim.renameItem(renamed.id, 'Renamed by test.txt');
    const moved = files.find((f) => !edited.includes(f.id) && f.id !== renamed.id && f.parentReference.id !== folders[0].id)!;
    sim.moveItem(moved.id, folders[0].id);
    const isUnder = (id: string, folderId: string): boolean => {
      for (let item = sim.getItem(drive.id, id); item && item.parentReference.id; item = sim.getItem(drive.id, item.parentReference.id)) {
        if (item.parentReference.id === folderId) return true;
      }
      return false;
    };
    const keep = [...edited, renamed.id, moved.id, folders[0].id];
    const deletedFolder = folders.find((f) => f.id !== folders[0].id && f.folder!.childCount > 0 && !keep.some((id) => isUnder(id, f.id)))!;
    const deleted = sim.deleteItems([deletedFolder.id]);
    expect(deleted.length).toBeGreaterThan(1);
    const added = sim.addFiles(4);

    const round2 = await deltaRound(quiet.deltaLink);
    const got = ids(round2.items);
    expect(new Set(got).size).toBe(got.length); // each item at most once
    // Exactly the changed items, plus the folders whose content (childCount/size) changed.
    const touched = new Set([...edited, renamed.id, moved.id, ...deleted, ...added]);
    for (const id of touched) expect(got).toContain(id);
    const extra = round2.items.filter((i) => !touched.has(i.id));
    for (const f of extra) expect(f.folder).toBeDefined();
    const ancestorsOf = (id: string): string[] => {
      const out: string[] = [];
      let item = expected.find((i) => i.id === id) ?? sim.getItem(drive.id, id);
      while (item && item.parentReference.id) {
        out.push(item.parentReference.id);
        item = expected.find((i) => i.id === item!.parentReference.id);
      }
      return out;
    };
    const contentChanged = new Set([...edited, moved.id, deletedFolder.id, ...added].flatMap(ancestorsOf));
    for (const id of [folders[0].id, ...ancestorsOf(folders[0].id)]) contentChanged.add(id);
    for (const f of extra) expect(contentChanged.has(f.id)).toBe(true);

    const byId = new Map(round2.items.map((i) => [i.id, i]));
    expect(byId.get(renamed.id)!.name).toBe('Renamed by test.txt');
    expect(byId.get(moved.id)!.parentReference.id).toBe(folders[0].id);
    for (const id of edited) {
      const before = expected.find((i) => i.id === id)!;
      const after = byId.get(id)!;
      expect(after.eTag).not.toBe(before.eTag);
      expect(after.cTag).not.toBe(before.cTag);
      expect(after.lastModifiedDateTime).toBe(new Date(clock).toISOString().replace('.000Z', 'Z'));
    }
    // Tombstones (OneDrive for Business): deleted facet, no name/cTag, parentReference without path.
    for (const id of deleted) {
      const t = byId.get(id)!;
      expect(t.deleted).toEqual({ state: 'deleted' });
      expect(t.name).toBeUndefined();
      expect(t.cTag).toBeUndefined();
      expect(t.parentReference).toEqual({ driveType: 'business', driveId: drive.id, id: expect.any(String) });
      expect(t.lastModifiedDateTime).toEqual(expect.any(String));
    }
    for (const it of round2.items) expect(it.parentReference.path).toBeUndefined();
    // Parents before children among the changes too.
    const pos2 = new Map(round2.items.map((it, k) => [it.id, k]));
    for (const it of round2.items) {
      const p = pos2.get(it.parentReference.id);
      if (p !== undefined) expect(p).toBeLessThan(pos2.get(it.id)!);
    }

    const round3 = await deltaRound(round2.deltaLink);
    expect(round3.items).toEqual([]);
  });

  it('drops cTag and size (not name) on personal-drive tombstones and supports delta(token=) URLs', async () => {
    const { sim, api } = await startSim({ seed: 12, drives: [{ fileCount: 30, driveType: 'personal' }] });
    const start = await deltaRound(`${api}/me/drive/root/delta`);
    const file = sim.items().find((i) => i.file)!;
    expect(file.cTag).toEqual(expect.any(String));
    expect(file.id).toMatch(/^[0-9A-F]{16}![0-9]+$/);
    const folder = sim.items().find((i) => i.folder && !i.root)!;
    expect(folder.cTag).toEqual(expect.any(String)); // personal folders have cTags
    sim.deleteItems([file.id]);
    const token = new URL(start.deltaLink).searchParams.get('token')!;
    const changes = await deltaRound(`${api}/me/drive/root/delta(token='${token}')`);
    const t = changes.items.find((i) => i.id === file.id)!;
    expect(t.deleted).toEqual({ state: 'deleted' });
    expect(t.name).toBe(file.name);
    expect(t.cTag).toBeUndefined();
    expect(t.size).toBeUndefined();
  });

  it('answers token=latest with an empty page and a deltaLink at the current position', async () => {
    const { sim, api } = await startSim({ seed: 13, drives: [{ fileCount: 50 }] });
    const latest = await getJson(`${api}/me/drive/root/delta?token=latest`);
    expect(latest.res.status).toBe(200);
    expect(latest.body.value).toEqual([]);
    expect(latest.body['@odata.nextLink']).toBeUndefined();
    expect(latest.body['@odata.deltaLink']).toMatch(/\/v1\.0\/me\/drive\/root\/delta\?token=/);
    const added = sim.addFiles(2);
    const next = await deltaRound(latest.body['@odata.deltaLink']);
    expect(ids(next.items.filter((i) => i.file)).sort()).toEqual([...added].sort());
  });

  it('answers 410 resyncRequired with a working Location after expireDeltaTokens(), and 400 for a malformed token', async () => {
    const { sim, api } = await startSim({ seed: 14, drives: [{ fileCount: 120 }] });
    const first = await getJson(`${api}/me/drive/root/delta?$top=50`);
    const nextLink = first.body['@odata.nextLink'] as string;
    const round = await deltaRound(nextLink);
    sim.expireDeltaTokens();

    for (const url of [round.deltaLink, nextLink]) {
      const gone = await getJson(url);
      expectGraphError(gone.res, gone.body, 410, 'resyncRequired');
      expect(gone.body.error.innerError.code).toBe('resyncChangesApplyDifferences');
      const location = gone.res.headers.get('location')!;
      expect(location).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1\.0\/me\/drive\/root\/delta\?\$top=50$/);
      const again = await deltaRound(location);
      expect(again.items).toHaveLength(sim.items().length);
    }

    const bad = await getJson(`${api}/me/drive/root/delta?token=not-a-real-token`);
    expectGraphError(bad.res, bad.body, 400, 'invalidRequest');
  });

  it('keeps delta nextLinks working with many enumerations in flight, unless the drive changed meanwhile', async () => {
    const { sim, api } = await startSim({ seed: 24, drives: [{ fileCount: 100 }] });
    const total = sim.items().length;
    const firstPages: string[] = [];
    for (let k = 0; k < 40; k++) firstPages.push((await getJson(`${api}/me/drive/root/delta?$top=10`)).body['@odata.nextLink']);
    // The oldest listings were evicted server-side; unchanged drive ⇒ rebuilt transparently.
    const oldest = await deltaRound(firstPages[0]);
    expect(new Set(ids(oldest.items)).size).toBe(total - 10);

    const stale = (await getJson(`${api}/me/drive/root/delta?$top=10`)).body['@odata.nextLink'];
    sim.editFiles(1);
    for (let k = 0; k < 40; k++) await get(`${api}/me/drive/root/delta?$top=10`);
    const gone = await getJson(stale);
    expectGraphError(gone.res, gone.body, 410, 'resyncRequired');
    // A listing that was not evicted keeps going after changes.
    const recent = (await getJson(`${api}/me/drive/root/delta?$top=10`)).body['@odata.nextLink'];
    sim.editFiles(1);
    expect((await get(recent)).status).toBe(200);
  });

  it('neither duplicates nor skips items when the drive changes in the middle of an enumeration', async () => {
    const { sim, api } = await startSim({ seed: 15, drives: [{ fileCount: 2_000 }] });
    const [drive] = sim.drives();
    const original = sim.items();
    const originalIds = ids(original);
    const order = new Map(originalIds.map((id, k) => [id, k]));
    let deletedUnseen: string[] = [];
    let edited: string[] = [];
    let added: string[] = [];
    let movedFolder = '';
    const round = await deltaRound(`${api}/drives/${drive.id}/root/delta?$top=200`, (page) => {
      if (page !== 3) return;
      // After 600 items: edit seen and unseen files, delete unseen files, add files, move a folder.
      const seen = new Set(originalIds.slice(0, 600));
      const files = original.filter((i) => i.file);
      edited = sim.editFiles([...files.filter((f) => seen.has(f.id)).slice(0, 3), ...files.filter((f) => !seen.has(f.id)).slice(0, 3)].map((f) => f.id));
      deletedUnseen = sim.deleteItems(
        files
          .filter((f) => !seen.has(f.id) && !edited.includes(f.id))
          .slice(5, 10)
          .map((f) => f.id),
      );
      added = sim.addFiles(7);
      const rootNames = new Set(original.filter((i) => i.parentReference.id === original[0].id).map((i) => (i.name as string).toLowerCase()));
      const folders = original.filter(
        (i) => i.folder && !seen.has(i.id) && i.parentReference.id !== original[0].id && !rootNames.has((i.name as string).toLowerCase()),
      );
      movedFolder = folders[folders.length - 1].id;
      sim.moveItem(movedFolder, original[0].id);
    });
    const got = ids(round.items);
    expect(new Set(got).size).toBe(got.length);
    // Everything that existed when the enumeration started and still exists, in order.
    expect(got).toEqual(originalIds.filter((id) => !deletedUnseen.includes(id)));
    for (let k = 1; k < got.length; k++) expect(order.get(got[k])!).toBeGreaterThan(order.get(got[k - 1])!);

    // The next delta brings what changed during the enumeration.
    const next = await deltaRound(round.deltaLink);
    const changed = ids(next.items);
    for (const id of [...edited, ...deletedUnseen, ...added, movedFolder]) expect(changed).toContain(id);
    for (const id of deletedUnseen) expect(next.items.find((i) => i.id === id)!.deleted).toEqual({ state: 'deleted' });
  });

  it('supports $select on delta and timestamp tokens on business drives', async () => {
    let clock = Date.UTC(2025, 6, 1);
    const { sim, api } = await startSim({ seed: 16, drives: [{ fileCount: 60 }], now: () => clock });
    const round = await deltaRound(`${api}/me/drive/root/delta?$select=id,name,deleted,parentReference`);
    for (const it of round.items) expect(Object.keys(it).sort()).toEqual(['id', 'name', 'parentReference']);
    expect(round.deltaLink).toContain('$select=id,name,deleted,parentReference');

    clock += 3_600_000;
    const cut = new Date(clock).toISOString();
    clock += 1_000;
    const [edited] = sim.editFiles(1);
    const since = await deltaRound(`${api}/me/drive/root/delta?token=${encodeURIComponent(cut)}&$select=id,file`);
    expect(ids(since.items.filter((i) => i.file))).toEqual([edited]);
  });
});

describe('Graph simulator: downloads', () => {
  it('redirects /content to a pre-authenticated URL that serves the bytes the quickXorHash describes, with Range support', async () => {
    let clock = Date.UTC(2025, 6, 1);
    const { sim, api } = await startSim({ seed: 17, drives: [{ fileCount: 200 }], now: () => clock, downloadUrlTtlMs: 60_000 });
    const file = sim
      .items()
      .filter((i) => i.file && (i.size as number) > 5_000 && (i.size as number) < 3_000_000)
      .sort((a, b) => (a.size as number) - (b.size as number))[0];
    expect(file).toBeDefined();

    const redirect = await get(`${api}/me/drive/items/${file.id}/content`);
    expect(redirect.status).toBe(302);
    const location = redirect.headers.get('location')!;
    expect(location).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/_download\/[^/]+\/[^/?]+\?tempauth=[A-Za-z0-9_-]+$/);

    // No Authorization needed; the bytes match size and quickXorHash.
    const whole = await fetch(location);
    expect(whole.status).toBe(200);
    expect(whole.headers.get('accept-ranges')).toBe('bytes');
    const bytes = Buffer.from(await whole.arrayBuffer());
    expect(bytes.length).toBe(file.size);
    expect(quickXorHash(bytes)).toBe(file.file!.hashes.quickXorHash);

    const part = await fetch(location, { headers: { range: 'bytes=1000-1999' } });
    expect(part.status).toBe(206);
    expect(part.headers.get('content-range')).toBe(`bytes 1000-1999/${file.size}`);
    expect(Buffer.from(await part.arrayBuffer()).equals(bytes.subarray(1000, 2000))).toBe(true);
    const suffix = await fetch(location, { headers: { range: 'bytes=-10' } });
    expect(suffix.status).toBe(206);
    expect(Buffer.from(await suffix.arrayBuffer()).equals(bytes.subarray(bytes.length - 10))).toBe(true);
    const beyond = await fetch(location, { headers: { range: `bytes=${file.size}-` } });
    expect(beyond.status).toBe(416);

    // Following the redirect (as fetch does by default) works too.
    const followed = await fetch(`${api}/me/drive/items/${file.id}/content`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(followed.status).toBe(200);
    expect(Buffer.from(await followed.arrayBuffer()).equals(bytes)).toBe(true);

    // Every item response mints a new URL; URLs expire after downloadUrlTtlMs.
    const a = (await getJson(`${api}/me/drive/items/${file.id}`)).body['@microsoft.graph.downloadUrl'];
    const b = (await getJson(`${api}/me/drive/items/${file.id}`)).body['@microsoft.graph.downloadUrl'];
    expect(a).not.toBe(b);
    clock += 60_000;
    const expired = await fetch(a);
    expect(expired.status).toBe(401);
    expect(((await expired.json()) as Json).error.code).toEqual(expect.any(String));
    const tampered = await fetch(b.replace(/tempauth=.{6}/, 'tempauth=AAAAAA'));
    expect(tampered.status).toBe(401);

    // An edit changes bytes, size and hash consistently.
    sim.editFiles([file.id]);
    const fresh = (await getJson(`${api}/me/drive/items/${file.id}`)).body;
    const freshBytes = Buffer.from(await (await fetch(fresh['@microsoft.graph.downloadUrl'])).arrayBuffer());
    expect(freshBytes.length).toBe(fresh.size);
    expect(quickXorHash(freshBytes)).toBe(fresh.file.hashes.quickXorHash);
    expect(fresh.file.hashes.quickXorHash).not.toBe(file.file!.hashes.quickXorHash);
    // The log never keeps the tempauth.
    expect(JSON.stringify(sim.requestLog())).not.toContain(new URL(b).searchParams.get('tempauth')!);
  });

  it('implements QuickXorHash per the published test vectors', () => {
    const vectors: Array<[string, string]> = [
      ['', 'AAAAAAAAAAAAAAAAAAAAAAAAAAA='],
      ['Sg==', 'SgAAAAAAAAAAAAAAAQAAAAAAAAA='],
      ['tbQ=', 'taAFAAAAAAAAAAAAAgAAAAAAAAA='],
      ['T6LYJIfDh81JrAK309H2JMJTXis=', 'zBTHrspn3mEcohlJdIUAbjGNaNg='],
    ];
    for (const [input, hash] of vectors) expect(quickXorHash(Buffer.from(input, 'base64'))).toBe(hash);
  });
});

describe('Graph simulator: throttling', () => {
  it('throttles with 429 + decimal Retry-After and counts a too-early retry as a violation', async () => {
    let clock = Date.UTC(2025, 6, 1);
    const { sim, api } = await startSim({ seed: 18, drives: [{ fileCount: 10 }], now: () => clock });
    sim.addAccessToken('other-client');
    sim.throttleNext(1, { retryAfterSeconds: 1.5 });

    const first = await getJson(`${api}/me/drive/root/children`);
    expect(first.res.status).toBe(429);
    expect(first.res.headers.get('retry-after')).toBe('1.5');
    expect(first.body).toEqual({
      error: {
        code: 'TooManyRequests',
        message: 'Please retry again later.',
        innerError: {
          code: '429',
          date: expect.stringMatching(INNER_DATE),
          message: 'Please retry after',
          'request-id': first.res.headers.get('request-id'),
          status: '429',
          'client-request-id': expect.any(String),
        },
      },
    });

    clock += 500;
    const early = await get(`${api}/me/drive/root/children`);
    expect(early.status).toBe(429);
    expect(early.headers.get('retry-after')).toBe('1');
    // Another client (token) is not affected.
    expect((await get(`${api}/me/drive/root/children`, 'other-client')).status).toBe(200);

    clock += 1_000;
    expect((await get(`${api}/me/drive/root/children`)).status).toBe(200);
    expect(sim.stats()).toEqual({ requests: 4, byStatus: { 200: 2, 429: 2 }, throttled: 2, retryAfterViolations: 1 });
    const log = sim.requestLog();
    expect(log.map((e) => [e.status, e.throttled])).toEqual([
      [429, true],
      [429, true],
      [200, false],
      [200, false],
    ]);
    expect(log[0]).toEqual({ at: Date.UTC(2025, 6, 1), method: 'GET', path: '/v1.0/me/drive/root/children', query: {}, status: 429, throttled: true });

    sim.resetStats();
    expect(sim.stats()).toEqual({ requests: 0, byStatus: {}, throttled: 0, retryAfterViolations: 0 });
  });

  it('throttles with 503 serviceNotAvailable, and only counts violations when enforcement is off', async () => {
    let clock = Date.UTC(2025, 6, 1);
    const { sim, api } = await startSim({ seed: 19, drives: [{ fileCount: 10 }], now: () => clock, enforceRetryAfter: false });
    sim.throttleNext(2, { status: 503, retryAfterSeconds: 2.128 });
    const first = await getJson(`${api}/me/drive`);
    expectGraphError(first.res, first.body, 503, 'serviceNotAvailable');
    expect(first.res.headers.get('retry-after')).toBe('2.128');
    clock += 100;
    // Too early: not enforced, but the second injected throttle still applies (and counts).
    expect((await get(`${api}/me/drive`)).status).toBe(503);
    clock += 100;
    expect((await get(`${api}/me/drive`)).status).toBe(200);
    expect(sim.stats().retryAfterViolations).toBe(2);
    expect(sim.stats().throttled).toBe(2);
  });
});

describe('Graph simulator: determinism', () => {
  it('gives identical responses for the same seed and operations, different ones for another seed', async () => {
    const fixed = () => Date.UTC(2025, 6, 1);
    const opts = { seed: 21, drives: [{ fileCount: 400 }, { fileCount: 20, driveType: 'personal' as const }], now: fixed };
    const a = await startSim(opts);
    const b = await startSim(opts);
    const c = await startSim({ ...opts, seed: 22 });
    const body = async (s: { base: string; api: string }, path: string) => (await (await get(`${s.api}${path}`)).text()).split(s.base).join('BASE');

    const paths = ['/me', '/me/drives', '/me/drive/root/children?$top=50', '/me/drive/root/delta?$top=100', '/sites/root'];
    for (const p of paths) expect(await body(a, p)).toBe(await body(b, p));
    // (b gets the same request as a, so both keep issuing the same request-ids.)
    expect(await body(a, '/me/drive/root/children')).toBe(await body(b, '/me/drive/root/children'));
    expect(await body(a, '/me/drive/root/children')).not.toBe(await body(c, '/me/drive/root/children'));
    await body(b, '/me/drive/root/children');

    expect(a.sim.editFiles(5)).toEqual(b.sim.editFiles(5));
    expect(a.sim.deleteItems(4)).toEqual(b.sim.deleteItems(4));
    expect(a.sim.addFiles(6)).toEqual(b.sim.addFiles(6));
    expect(JSON.stringify(a.sim.items())).toBe(JSON.stringify(b.sim.items()));
    const errA = await body(a, '/me/drive/items/missing');
    expect(errA).toBe(await body(b, '/me/drive/items/missing'));
  });
});

describe('Graph simulator: scale', () => {
  // How fast is a benchmark figure, not an assertion: on two busy cores the start took 4.2 s once.
  it('starts a 100,000-file drive and serves a full delta walk at $top=1000', async () => {
    const { sim, api } = await startSim({ seed: 23, drives: [{ fileCount: 100_000 }] });

    let count = 0;
    let files = 0;
    let pages = 0;
    let next: string | undefined = `${api}/me/drive/root/delta?$top=1000`;
    const seen = new Set<string>();
    let deltaLink: string | undefined;
    while (next) {
      const res = await get(next);
      expect(res.status).toBe(200);
      const body = (await res.json()) as Json;
      pages++;
      for (const it of body.value) {
        seen.add(it.id);
        if (it.file) files++;
      }
      count += body.value.length;
      next = body['@odata.nextLink'];
      deltaLink = body['@odata.deltaLink'];
    }
    expect(files).toBe(100_000);
    expect(count).toBe(seen.size);
    expect(count).toBe(100_000 + 4_000 + 1);
    expect(pages).toBe(Math.ceil(count / 1000));
    expect(deltaLink).toContain('token=');

    // Changes on a large drive are found quickly.
    const edited = sim.editFiles(10);
    const changes = await deltaRound(deltaLink!);
    for (const id of edited) expect(ids(changes.items)).toContain(id);
  });
});
