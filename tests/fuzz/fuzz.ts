import type { FuzzFixture } from './fixture';
import { answerProblems, errorCodeOf, secretsInLogs, snapshot, snapshotDiff, type Snapshot } from './invariants';
import { malformedRequest, type FuzzRequest } from './mutations';
import { Prng } from './prng';
import { rawRequest, RequestTimeout, type RawResponse } from './raw-request';
import { ROUTES } from './routes';

/**
 * The fuzz loop: malformed requests for every route in turn (round robin, so each route gets
 * its share), sent in batches with a few in flight, each answer checked as it comes, and the
 * database compared before and after every batch of refused requests.
 *
 * A batch in which some request was accepted and could write (a 2xx on a route that is not
 * read-only) cannot tell its refused requests' writes from the accepted one's: the database
 * is then re-read once the accepted work has settled, and the batch's refused requests are
 * sent again on their own and checked. Every refused request is thus checked once.
 */
export interface FuzzOptions {
  seed: number;
  requests: number;
  concurrency?: number;
  batchSize?: number;
  /** An answer slower than this is a hang. */
  timeoutMs?: number;
  /** Progress lines (the CLI prints them; the jest slice stays quiet). */
  progress?: (line: string) => void;
}

export interface Failure {
  kind: 'answer' | 'hang' | 'transport' | 'state' | 'logs' | 'after';
  detail: string;
  request?: string;
}

export interface FuzzReport {
  seed: number;
  requests: number;
  replayed: number;
  byClass: Record<string, number>;
  byStatus: Record<string, number>;
  byRoute: Record<string, Record<string, number>>;
  errorCodes: Record<string, number>;
  stateChecked: number;
  stateUnchecked: number;
  slowestMs: number;
  durationMs: number;
  /** Time spent answering, by mutation family (summed over requests). */
  msByFamily: Record<string, number>;
  /** Where the time went: sending, reading the database, waiting for accepted work. */
  timeMs: { sending: number; snapshots: number; settling: number };
  failures: Failure[];
}

interface Outcome {
  req: FuzzRequest;
  res?: RawResponse;
}

export async function runFuzz(f: FuzzFixture, opts: FuzzOptions): Promise<FuzzReport> {
  const started = performance.now();
  const concurrency = opts.concurrency ?? 8;
  const batchSize = opts.batchSize ?? 100;
  const timeoutMs = opts.timeoutMs ?? 10_000;
  const db = f.stack.core.mongo.db(f.stack.env.MONGODB_DB);
  const prng = new Prng(opts.seed);
  const report: FuzzReport = {
    seed: opts.seed,
    requests: 0,
    replayed: 0,
    byClass: {},
    byStatus: {},
    byRoute: {},
    errorCodes: {},
    stateChecked: 0,
    stateUnchecked: 0,
    slowestMs: 0,
    durationMs: 0,
    msByFamily: {},
    timeMs: { sending: 0, snapshots: 0, settling: 0 },
    failures: [],
  };
  const timed = async <T>(what: keyof FuzzReport['timeMs'], work: () => Promise<T>): Promise<T> => {
    const t = performance.now();
    try {
      return await work();
    } finally {
      report.timeMs[what] += performance.now() - t;
    }
  };
  const describe = (req: FuzzRequest) =>
    `${req.method} ${req.path.length > 160 ? `${req.path.slice(0, 160)}…` : req.path} [${req.route}; ${req.families.join(', ')}]`;

  const send = (batch: FuzzRequest[], replay: boolean) => timed('sending', () => sendBatch(batch, replay));
  const sendBatch = async (batch: FuzzRequest[], replay: boolean): Promise<Outcome[]> => {
    const outcomes: Outcome[] = batch.map((req) => ({ req }));
    let next = 0;
    const worker = async () => {
      while (next < batch.length) {
        const o = outcomes[next++];
        try {
          o.res = await rawRequest(f.stack.apiUrl, o.req, { timeoutMs });
        } catch (err) {
          report.failures.push({
            kind: err instanceof RequestTimeout ? 'hang' : 'transport',
            detail: err instanceof Error ? err.message : String(err),
            request: describe(o.req),
          });
        }
        if (replay) report.replayed++;
        else report.requests++;
        if (!o.res) continue;
        const status = String(o.res.status);
        report.byStatus[status] = (report.byStatus[status] ?? 0) + 1;
        const cls = `${status[0]}xx`;
        report.byClass[cls] = (report.byClass[cls] ?? 0) + 1;
        const route = (report.byRoute[o.req.route] ??= {});
        route[cls] = (route[cls] ?? 0) + 1;
        const code = errorCodeOf(o.res);
        const label = `${status} ${code ?? (o.req.method === 'HEAD' ? '(HEAD: headers only)' : '(no code)')}`;
        if (o.res.status >= 400) report.errorCodes[label] = (report.errorCodes[label] ?? 0) + 1;
        report.slowestMs = Math.max(report.slowestMs, o.res.ms);
        for (const fam of o.req.families) report.msByFamily[fam] = (report.msByFamily[fam] ?? 0) + o.res.ms;
        for (const problem of answerProblems(o.req.method, o.req.route, o.res, f.secrets))
          report.failures.push({ kind: 'answer', detail: problem, request: describe(o.req) });
      }
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, batch.length) }, worker));
    return outcomes;
  };

  const acceptedWrite = (o: Outcome) => o.res !== undefined && o.res.status < 400 && !o.req.readOnly;
  const checkState = (before: Snapshot, after: Snapshot, outcomes: Outcome[]) => {
    const diff = snapshotDiff(before, after);
    if (diff.length) {
      report.failures.push({
        kind: 'state',
        detail: `refused requests changed the database: ${diff.join('; ')}`,
        request: outcomes.map((o) => `${o.res?.status ?? '---'} ${describe(o.req)}`).join('\n    '),
      });
    }
  };

  let baseline: Snapshot | null = null;
  const read = () => timed('snapshots', () => snapshot(db));
  const freshBaseline = async () => {
    await timed('settling', () => f.quiesce());
    return read();
  };

  for (let start = 0, batchNo = 0; start < opts.requests; start += batchSize, batchNo++) {
    // A connect session allows ten attempts; a fresh one per batch keeps the browser routes reachable.
    if (batchNo > 0) {
      await f.rotateSession();
      baseline = null;
    }
    baseline ??= await freshBaseline();
    const batch = Array.from({ length: Math.min(batchSize, opts.requests - start) }, (_, i) =>
      malformedRequest(ROUTES[(start + i) % ROUTES.length], f, prng, start + i),
    );
    const outcomes = await send(batch, false);

    if (!outcomes.some(acceptedWrite)) {
      const after = await read();
      checkState(baseline, after, outcomes);
      report.stateChecked += outcomes.length;
      baseline = after;
    } else {
      // Let the accepted work settle, then check the refused requests on their own.
      baseline = await freshBaseline();
      const refused = outcomes.filter((o) => o.res && o.res.status >= 400).map((o) => o.req);
      report.stateUnchecked += outcomes.length - refused.length;
      const again = await send(refused, true);
      if (again.some(acceptedWrite)) {
        report.stateUnchecked += refused.length;
        baseline = null;
      } else {
        const after = await read();
        checkState(baseline, after, again);
        report.stateChecked += refused.length;
        baseline = after;
      }
    }
    if (batchNo % 10 === 9)
      opts.progress?.(`  ${report.requests} requests, ${report.failures.length} failures, ${((performance.now() - started) / 1000).toFixed(0)} s`);
  }

  // Still answering, still intact.
  const health = await rawRequest(f.stack.apiUrl, { method: 'GET', path: '/health' }, { timeoutMs }).catch(() => undefined);
  if (health?.status !== 200) report.failures.push({ kind: 'after', detail: `GET /health answered ${health?.status ?? 'nothing'} after the fuzz` });
  const seeded = await f.stack.api('GET', `/connections/${f.ids.luma}?provider_config_key=luma`);
  if (seeded.status !== 200) report.failures.push({ kind: 'after', detail: `the seeded connection answers ${seeded.status} after the fuzz` });
  for (const name of secretsInLogs(f.stack.logs, f.secrets)) report.failures.push({ kind: 'logs', detail: `the ${name} appears in the API/worker logs` });

  report.durationMs = performance.now() - started;
  return report;
}

export function formatReport(r: FuzzReport): string {
  const sorted = (o: Record<string, number>) => Object.entries(o).sort((a, b) => b[1] - a[1]);
  const lines = [
    `fuzz seed ${r.seed}: ${r.requests} malformed requests (+${r.replayed} refused ones replayed for the state check) in ${(r.durationMs / 1000).toFixed(1)} s, slowest answer ${r.slowestMs.toFixed(0)} ms`,
    `  time: sending ${(r.timeMs.sending / 1000).toFixed(1)} s, database snapshots ${(r.timeMs.snapshots / 1000).toFixed(1)} s, waiting for accepted work ${(r.timeMs.settling / 1000).toFixed(1)} s`,
    `  answer time by mutation: ${sorted(r.msByFamily)
      .slice(0, 8)
      .map(([k, v]) => `${k} ${(v / 1000).toFixed(1)} s`)
      .join(', ')}`,
    `  by class: ${sorted(r.byClass)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')}`,
    `  by status: ${sorted(r.byStatus)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')}`,
    `  state checked after ${r.stateChecked} refused requests (${r.stateUnchecked} accepted or unattributable)`,
    '  by route:',
    ...Object.entries(r.byRoute).map(
      ([route, classes]) =>
        `    ${route.padEnd(46)} ${sorted(classes)
          .map(([k, v]) => `${k} ${v}`)
          .join(', ')}`,
    ),
    '  answers (status code):',
    ...sorted(r.errorCodes).map(([k, v]) => `    ${String(v).padStart(6)}  ${k}`),
    `  failures: ${r.failures.length}`,
    ...r.failures.slice(0, 30).map((x) => `    [${x.kind}] ${x.detail}${x.request ? `\n    ${x.request}` : ''}`),
  ];
  return lines.join('\n');
}
