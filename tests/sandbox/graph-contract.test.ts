import Ajv, { type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { createGenerator } from 'ts-json-schema-generator';
import { oneDrive } from '../../integrations/one-drive';
import type { ConnectionInfo } from '../../runtime/types';
import { createGraphSimulator, GRAPH_DEFAULT_ACCESS_TOKEN } from '../../sandbox/graph';
import { liveContext } from '../mocks-runtime/live-recording';
import type { ProviderAnswer } from '../support/provider-contract';

// The Graph simulator stands in for graph.microsoft.com in every test. Microsoft publishes no
// machine-readable description of Graph on npm or PyPI; it does publish the TypeScript types of
// Graph's entities generated from its metadata (@microsoft/microsoft-graph-types). Those types
// are turned into JSON Schema (ts-json-schema-generator, every object closed: a property Graph
// does not define is an error), and each answer the OneDrive integration gets from the
// simulator is validated against the entity its URL returns. Instance annotations (`@odata.*`,
// `@microsoft.graph.downloadUrl`) are not entity properties and are left out of the check.

const DRIVE_ITEM = 'graph#/definitions/DriveItem';
const DRIVE = 'graph#/definitions/Drive';
const UPLOAD_SESSION = 'graph-upload#/definitions/UploadSession';

/**
 * What each Graph URL the integration calls answers, by method and path (version prefix
 * removed): an entity, or a collection (`{ value: [...] }`) of one. An answer no row names fails
 * the test, so a new call of the integration needs its row here.
 */
const ANSWERS: Array<{ method: string; path: RegExp; entity: string; collection?: true }> = [
  { method: 'GET', path: /^\/me$/, entity: 'graph#/definitions/User' },
  { method: 'GET', path: /^\/sites\/root$/, entity: 'graph#/definitions/Site' },
  { method: 'GET', path: /^\/me\/drives$/, entity: DRIVE, collection: true },
  { method: 'GET', path: /^\/drives\/[^/]+\/root\/delta$/, entity: DRIVE_ITEM, collection: true },
  { method: 'GET', path: /^\/drives\/[^/]+\/items\/[^/]+\/children$/, entity: DRIVE_ITEM, collection: true },
  { method: 'GET', path: /^\/drives\/[^/]+\/items\/[^/]+$/, entity: DRIVE_ITEM },
  { method: 'POST', path: /^\/drives\/[^/]+\/(root|items\/[^/]+)(:\/.*:)?\/children$/, entity: DRIVE_ITEM },
  { method: 'PUT', path: /^\/drives\/[^/]+\/(root|items\/[^/]+):\/.*:\/content$/, entity: DRIVE_ITEM },
  { method: 'POST', path: /^\/drives\/[^/]+\/(root|items\/[^/]+):\/.*:\/createUploadSession$/, entity: UPLOAD_SESSION },
];
/**
 * Properties Graph sends that its published types lack, each with why it is kept: the
 * simulator sends them because Graph does, and the integration reads them.
 */
const SENT_BUT_UNTYPED: Record<string, string[]> = {
  // OneDrive for Business and SharePoint identities carry the user's e-mail (the OneDrive
  // integration's Drive `owner.email`); the `identity` type lists only displayName and id.
  Identity: ['email'],
};

const ajv = new Ajv({ strict: false, allErrors: true });
addFormats(ajv);

beforeAll(() => {
  // One program over the types file, reused for each root type (building it is the slow part).
  const generator = createGenerator({
    path: require.resolve('@microsoft/microsoft-graph-types/microsoft-graph.d.ts'),
    skipTypeCheck: true,
    expose: 'all',
    topRef: true,
    additionalProperties: false,
    jsDoc: 'none',
  });
  // DriveItem's schema reaches Drive, User and Site through its navigation properties.
  const graph = generator.createSchema('DriveItem');
  for (const [definition, names] of Object.entries(SENT_BUT_UNTYPED)) {
    const schema = graph.definitions![definition] as { properties: Record<string, unknown> };
    for (const name of names) schema.properties[name] = { type: 'string' };
  }
  ajv.addSchema(graph, 'graph');
  ajv.addSchema(generator.createSchema('UploadSession'), 'graph-upload');
}, 120_000);

/** The answer without instance annotations, at any depth. */
function withoutAnnotations(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutAnnotations);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).flatMap(([k, v]) => (k.startsWith('@') ? [] : [[k, withoutAnnotations(v)]])));
}

const compiled = new Map<string, ValidateFunction>();
function validator(entity: string, collection: boolean): ValidateFunction {
  const key = `${entity} ${collection}`;
  let validate = compiled.get(key);
  if (!validate) {
    validate = ajv.compile(
      collection
        ? { type: 'object', required: ['value'], properties: { value: { type: 'array', items: { $ref: entity } } }, additionalProperties: false }
        : { $ref: entity },
    );
    compiled.set(key, validate);
  }
  return validate;
}

/** Which Graph entity the answer is and whether it fits it; null problem when it does. */
function check(a: ProviderAnswer, uploadPaths: Set<string>): { entity: string | null; problem: string | null } {
  const path = a.path.replace(/^\/(v1\.0|beta)(?=\/)/, '');
  // An upload session's own URL: 202 with the session's state, then the item.
  const row = uploadPaths.has(a.path)
    ? { entity: a.status === 202 ? UPLOAD_SESSION : DRIVE_ITEM, collection: false }
    : ANSWERS.find((r) => r.method === a.method && r.path.test(path));
  if (!row) return { entity: null, problem: `no Graph entity is known for ${a.method} ${a.path}` };
  const collection = row.collection === true;
  const entity = `${row.entity.replace(/^.*\/definitions\//, '')}${collection ? '[]' : ''}`;
  const validate = validator(row.entity, collection);
  if (validate(withoutAnnotations(a.body))) return { entity, problem: null };
  const errors = (validate.errors ?? []).slice(0, 8).map((e) => `${e.instancePath || '(body)'} ${e.message ?? ''} ${JSON.stringify(e.params)}`);
  return { entity, problem: errors.join('; ') };
}

describe("the Graph simulator answers with Graph's published entity types", () => {
  it('for every call of the OneDrive integration and of Weft on its behalf', async () => {
    const sim = createGraphSimulator({
      seed: 26,
      drives: [{ fileCount: 30 }, { fileCount: 8, driveType: 'documentLibrary' }],
      maxPageSize: 10,
      defaultPageSize: 10,
    });
    const base = await sim.start();
    const answers: ProviderAnswer[] = [];
    try {
      const connection: ConnectionInfo = {
        connection_id: 'contract-drive',
        provider_config_key: 'one-drive',
        provider: 'one-drive',
        auth_mode: 'OAUTH2',
        connection_config: {},
        metadata: {},
      };
      const live = (metadata: Record<string, unknown> = {}) =>
        liveContext({
          integration: oneDrive,
          simulatorUrl: base,
          headers: { authorization: `Bearer ${GRAPH_DEFAULT_ACCESS_TOKEN}` },
          connection: { ...connection, metadata },
        });
      const runs = [];

      // Weft's own calls: the credentials check and the SharePoint host of the tenant.
      const own = live();
      await own.ctx.get({ endpoint: oneDrive.provider.verify!.endpoint });
      await own.ctx.get({ endpoint: '/v1.0/sites/root' });
      runs.push(own);

      const sync = live();
      await oneDrive.syncs.find((s) => s.name === 'user-files')!.exec(sync.ctx);
      runs.push(sync);
      const files = (sync.run.batchSave.File as Array<{ id: string; drive_id: string; is_folder: boolean }>).filter((f) => !f.is_folder);
      const folder = (sync.run.batchSave.File as Array<{ id: string; drive_id: string; is_folder: boolean }>).find((f) => f.is_folder)!;

      const selected = live({ pickedFiles: [{ driveId: files[0].drive_id, fileIds: [files[0].id, folder.id] }] });
      await oneDrive.syncs.find((s) => s.name === 'user-files/selected')!.exec(selected.ctx);
      runs.push(selected);

      const action = (name: string, input: unknown) => {
        const run = live();
        runs.push(run);
        return oneDrive.actions.find((a) => a.name === name)!.exec(run.ctx, input);
      };
      const driveId = files[0].drive_id;
      await action('list-drives', {});
      await action('fetch-file', { driveId, itemId: files[1].id });
      await action('create-folder', { driveId, name: 'Checked against the contract', conflictBehavior: 'replace' });
      await action('upload-file', { driveId, fileName: 'small.txt', content: Buffer.from('small\n').toString('base64'), conflictBehavior: 'replace' });
      // Over one fragment: through an upload session, in three parts.
      const large = Buffer.alloc(700_000, 'x').toString('base64');
      await action('upload-file', { driveId, fileName: 'large.bin', content: large, conflictBehavior: 'replace' });

      for (const { run } of runs) {
        for (const x of run.exchanges) {
          // File bytes (fetch-file's download) are not JSON: nothing to check.
          if (typeof x.response.data !== 'object' || x.response.data === null) continue;
          answers.push({ method: x.request.method!, path: new URL(x.request.endpoint, base).pathname, status: x.response.status, body: x.response.data });
        }
      }
    } finally {
      await sim.stop();
    }

    const uploadPaths = new Set(
      answers.flatMap((a) => (a.path.endsWith('/createUploadSession') ? [new URL((a.body as { uploadUrl: string }).uploadUrl).pathname] : [])),
    );
    const checked = answers.map((a) => ({ answer: `${a.method} ${a.path} → ${a.status}`, ...check(a, uploadPaths) }));
    expect(checked.filter((c) => c.problem !== null)).toEqual([]);
    expect([...new Set(checked.map((c) => c.entity))].sort()).toEqual(['DriveItem', 'DriveItem[]', 'Drive[]', 'Site', 'UploadSession', 'User']);
  });
});
