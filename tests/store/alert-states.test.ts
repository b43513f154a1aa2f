import { MongoClient } from 'mongodb';
import { AlertStateStore, alertScope } from '../../store/alert-states';
import { sweepExpired } from '../../store/ttl';
import { useTestDatabase } from '../support/test-database';
import { testInfra } from '../support/weft-stack';

/**
 * Chat alert state on the run's MongoDB-wire server (FerretDB by default), written by two
 * clients at once as two worker processes would: the insert of a key decides.
 */
describe('alert states', () => {
  const database = useTestDatabase('alert_states');
  let other: MongoClient;
  let a: AlertStateStore;
  let b: AlertStateStore;

  beforeAll(async () => {
    other = new MongoClient(testInfra().mongodbUri, { retryWrites: false });
    await other.connect();
    a = new AlertStateStore(database.db());
    b = new AlertStateStore(other.db(database.db().databaseName));
    await a.ensureIndexes();
  });
  afterAll(async () => other?.close());

  const scope = alertScope('conn-1', { name: 'list-events', variant: 'base' });

  test('processes opening an episode at once share one; one of them takes each alert', async () => {
    const at = new Date();
    const episodes = await Promise.all([a, b, a, b].map((s) => s.openEpisode(scope, at)));
    expect(new Set(episodes.map((e) => e.episode)).size).toBe(1);

    const claims = await Promise.all(
      Array.from({ length: 8 }, (_, i) => (i % 2 ? a : b).claimAlert(episodes[0], 'provider_http_error', 0, { run: `run-${i}`, at, reported: 1 })),
    );
    expect(claims.filter(Boolean)).toHaveLength(1);
    const [mark] = await a.alerts(episodes[0], 'provider_http_error');
    // The run that took it holds it on a retry; the others still do not.
    expect(await b.claimAlert(episodes[0], 'provider_http_error', 0, { run: mark.run, at, reported: 1 })).toBe(true);
    expect(await b.claimAlert(episodes[0], 'provider_http_error', 0, { run: 'run-other', at, reported: 1 })).toBe(false);

    // A failure reported twice is one.
    await Promise.all([a, b, a].map((s) => s.recordFailure(episodes[0], { run: 'run-1', code: 'provider_http_error', at })));
    expect(await a.failures(episodes[0])).toHaveLength(1);

    // Closed: its documents are gone, the next failure opens a new episode.
    await a.closeEpisode(episodes[0]);
    expect(await b.episode(scope)).toBeNull();
    expect(await a.failures(episodes[0])).toHaveLength(0);
    expect(await a.alerts(episodes[0], 'provider_http_error')).toHaveLength(0);
    expect((await b.openEpisode(scope, new Date())).episode).not.toBe(episodes[0].episode);
  });

  test('retention forgets an episode opened before the cutoff, with its failures and alerts', async () => {
    const old = alertScope('conn-old', null);
    const recent = alertScope('conn-recent', null);
    const longAgo = new Date(Date.now() - 40 * 86_400_000);
    const oldEpisode = await a.openEpisode(old, longAgo);
    await a.recordFailure(oldEpisode, { run: 'r1', code: 'refresh_failed', at: longAgo });
    await a.claimAlert(oldEpisode, 'refresh_failed', 0, { run: 'r1', at: longAgo, reported: 1 });
    const recentEpisode = await a.openEpisode(recent, new Date());
    await a.recordFailure(recentEpisode, { run: 'r2', code: 'refresh_failed', at: new Date() });

    const rules = await a.ensureIndexes();
    if (rules.every((r) => r.native)) return; // MongoDB: its TTL index removes them
    await sweepExpired(rules);
    expect(await a.episode(old)).toBeNull();
    expect(await a.failures(oldEpisode)).toHaveLength(0);
    expect(await a.alerts(oldEpisode, 'refresh_failed')).toHaveLength(0);
    expect(await a.episode(recent)).toEqual(recentEpisode);
    expect(await a.failures(recentEpisode)).toHaveLength(1);
  });
});
