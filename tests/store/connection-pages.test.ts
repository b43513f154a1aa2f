import { randomUUID } from 'node:crypto';
import { ConnectionStore, type ConnectionDoc, type NewConnection } from '../../store/connections';
import { useTestDatabase } from '../support/test-database';

/**
 * The console's connection list (ConnectionStore.pageInScopes): a keyset cursor over the
 * integrations' (or a tag's) key ranges merged, newest first. Walking every page gives every
 * matching connection once, in order, however the pages fall across the ranges, also when a
 * search makes a range stop early.
 */
describe('connection pages by cursor', () => {
  const testDb = useTestDatabase('weft_connection_pages');
  let store: ConnectionStore;
  const made: ConnectionDoc[] = [];

  const newConnection = (i: number, over: Partial<NewConnection> = {}): NewConnection => ({
    _id: randomUUID(),
    environment: 'dev',
    provider_config_key: i % 3 === 0 ? 'github' : 'luma',
    provider: i % 3 === 0 ? 'github' : 'luma',
    connection_id: `user-${String(i).padStart(2, '0')}`,
    auth_mode: 'API_KEY',
    credentials_encrypted: 'sealed',
    connection_config: {},
    metadata: {},
    tags: { team: i % 2 === 0 ? 'even' : 'odd' },
    ...over,
  });

  beforeAll(async () => {
    store = new ConnectionStore(testDb.db());
    await store.ensureIndexes();
    // Several within one millisecond too: the position breaks ties by _id.
    for (let i = 0; i < 23; i++) made.push(await store.create(newConnection(i)));
    made.push(await store.create(newConnection(99, { environment: 'prod' })));
    // One id in two integrations, and ids whose encoded form differs from the id.
    made.push(await store.create(newConnection(0, { connection_id: 'user-1 shared', provider_config_key: 'luma' })));
    made.push(await store.create(newConnection(0, { connection_id: 'user-1 shared', provider_config_key: 'github', provider: 'github' })));
    made.push(await store.create(newConnection(1, { connection_id: 'user-1é' })));
  });

  const newestFirst = (docs: ConnectionDoc[]) =>
    [...docs].sort((a, b) => b.created_at.getTime() - a.created_at.getTime() || (a._id < b._id ? 1 : a._id > b._id ? -1 : 0)).map((d) => d.connection_id);

  async function walk(opts: { tags?: Record<string, string>; keys?: string[]; match?: (d: ConnectionDoc) => boolean; limit: number }) {
    const seen: string[] = [];
    let after: string | undefined;
    for (let pages = 0; pages < 100; pages++) {
      const page = await store.pageInScopes('dev', {
        tags: opts.tags ?? {},
        providerConfigKeys: opts.keys ?? ['luma', 'github'],
        match: opts.match ?? (() => true),
        after,
        limit: opts.limit,
      });
      expect(page.connections.length).toBeLessThanOrEqual(opts.limit);
      seen.push(...page.connections.map((c) => c.connection_id));
      if (page.next === null) return seen;
      after = page.next;
    }
    throw new Error('the pages never ended');
  }

  const dev = () => made.filter((c) => c.environment === 'dev');

  test.each([1, 4, 7, 50])('every connection of the environment once, newest first, in pages of %i', async (limit) => {
    expect(await walk({ limit })).toEqual(newestFirst(dev()));
  });

  async function search(prefix: string, limit: number, opts: { keys?: string[]; match?: (d: ConnectionDoc) => boolean } = {}) {
    const seen: string[] = [];
    let after: string | undefined;
    for (let pages = 0; pages < 100; pages++) {
      const page = await store.pageByIdPrefix('dev', {
        providerConfigKeys: opts.keys ?? ['luma', 'github'],
        prefix,
        match: opts.match ?? (() => true),
        after,
        limit,
      });
      seen.push(...page.connections.map((c) => `${c.provider_config_key}/${c.connection_id}`));
      if (page.next === null) return seen;
      after = page.next;
    }
    throw new Error('the pages never ended');
  }

  test.each([1, 2, 5, 50])('a search by the start of the id: every match once, in id order, in pages of %i', async (limit) => {
    const matches = dev()
      .filter((c) => c.connection_id.startsWith('user-1'))
      .map((c) => ({ key: c.provider_config_key, id: encodeURIComponent(c.connection_id), name: `${c.provider_config_key}/${c.connection_id}` }))
      .sort((a, b) => (a.id !== b.id ? (a.id < b.id ? -1 : 1) : a.key < b.key ? -1 : 1))
      .map((m) => m.name);
    expect(matches).toContain('github/user-1 shared');
    expect(matches).toContain('luma/user-1 shared');
    expect(await search('user-1', limit)).toEqual(matches);
    expect(await search('user-1', limit, { keys: ['github'] })).toEqual(matches.filter((m) => m.startsWith('github/')));
    expect(await search('nobody', limit)).toEqual([]);
  });

  test('one integration, one tag, and a tag within an integration', async () => {
    expect(await walk({ keys: ['github'], limit: 3 })).toEqual(newestFirst(dev().filter((c) => c.provider_config_key === 'github')));
    expect(await walk({ tags: { team: 'odd' }, limit: 4 })).toEqual(newestFirst(dev().filter((c) => c.tags.team === 'odd')));
    expect(await walk({ tags: { TEAM: 'even' }, keys: ['luma'], limit: 2 })).toEqual(
      newestFirst(dev().filter((c) => c.tags.team === 'even' && c.provider_config_key === 'luma')),
    );
  });

  test('a filter checked on each document: only its matches, none skipped where a range stopped early', async () => {
    const match = (d: ConnectionDoc) => d.connection_id.endsWith('1') || d.connection_id.endsWith('7');
    expect(await walk({ match, limit: 2 })).toEqual(newestFirst(dev().filter(match)));
  });
});
