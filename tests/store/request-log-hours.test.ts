import { RequestLogStore, type RequestLogDoc } from '../../store/request-logs';
import { useTestDatabase } from '../support/test-database';

/**
 * Calls per integration and hour (store/request-log-hours.ts), counted as the request log is
 * written, summed in the database across writers, failed calls apart, other integrations and
 * environments apart; hours without calls read as zero.
 */
describe('request log hours', () => {
  const testDb = useTestDatabase('weft_request_log_hours');
  const HOUR = 3_600_000;
  const T0 = Date.parse('2026-12-01T00:00:00.000Z');

  const entry = (at: number, over: Partial<RequestLogDoc> = {}): RequestLogDoc => ({
    at: new Date(at),
    environment: 'dev',
    connection: 'c1',
    connection_id: 'user-1',
    integration: 'luma',
    operation: 'sync:list-events',
    run_id: null,
    method: 'GET',
    url: 'https://api.example.test/x',
    status: 200,
    duration_ms: 5,
    attempt: 1,
    rate_limit_wait_ms: 0,
    error: null,
    ...over,
  });

  test('two writers’ calls summed per hour, with their failures; other integrations and environments apart', async () => {
    // Two processes' stores on one database.
    const [a, b] = [new RequestLogStore(testDb.db(), 14), new RequestLogStore(testDb.db(), 14)];
    await a.ensureIndexes();
    const noFailure = () => undefined;
    for (let i = 0; i < 5; i++) a.append(entry(T0 + 10 * 60_000 + i), noFailure);
    b.append(entry(T0 + 20 * 60_000, { status: 503 }), noFailure);
    b.append(entry(T0 + 30 * 60_000, { status: null, error: 'connect ECONNREFUSED' }), noFailure);
    await b.insert(entry(T0 + 2 * HOUR + 1, { status: 404 }));
    a.append(entry(T0 + 2 * HOUR + 5), noFailure);
    a.append(entry(T0 + 10 * 60_000, { integration: 'github' }), noFailure);
    b.append(entry(T0 + 10 * 60_000, { environment: 'prod' }), noFailure);
    await Promise.all([a.flush(), b.flush()]);
    // A second flush of the same writer adds to what the first wrote.
    a.append(entry(T0 + 50 * 60_000), noFailure);
    await a.flush();

    expect(await a.hours.read('dev', 'luma', new Date(T0), 4)).toEqual([
      { calls: 8, errors: 2 },
      { calls: 0, errors: 0 },
      { calls: 2, errors: 1 },
      { calls: 0, errors: 0 },
    ]);
    expect(await b.hours.read('dev', 'github', new Date(T0), 1)).toEqual([{ calls: 1, errors: 0 }]);
    expect(await b.hours.read('prod', 'luma', new Date(T0), 1)).toEqual([{ calls: 1, errors: 0 }]);
    // From a later hour on, the earlier ones are not read.
    expect(await a.hours.read('dev', 'luma', new Date(T0 + 2 * HOUR), 2)).toEqual([
      { calls: 2, errors: 1 },
      { calls: 0, errors: 0 },
    ]);
  });
});
