/**
 * Latency sampling for the read figures. A figure has a cap on requests and a time budget:
 * on a store whose reads cost seconds, a fixed count of 200 would take an hour, so the
 * budget cuts the repetitions (never the data), and the figure says how many it took.
 */

export interface Samples {
  /** Milliseconds per request, in the order taken. */
  ms: number[];
  elapsedMs: number;
  /**
   * CPU time of this process (the in-process API and the client together) over the elapsed
   * time, in percent: near 100 means the Node side, not the database, sets the pace.
   */
  nodeCpuPercent: number;
}

/** Runs `request` one at a time, up to `max` times or until `budgetMs` is spent (at least `min`). */
export async function sampleSequential(request: (i: number) => Promise<void>, limits: { max: number; min: number; budgetMs: number }): Promise<Samples> {
  const ms: number[] = [];
  const start = now();
  const cpu = process.cpuUsage();
  while (ms.length < limits.max && (ms.length < limits.min || now() - start < limits.budgetMs)) {
    const t = now();
    await request(ms.length);
    ms.push(now() - t);
  }
  const elapsedMs = now() - start;
  return { ms, elapsedMs, nodeCpuPercent: cpuPercent(cpu, elapsedMs) };
}

/**
 * `concurrency` loops issuing `request` back to back for `durationMs`; a request started
 * before the end is waited for, and each loop completes at least one. Throughput is
 * completed requests over the time until the last one ended.
 */
export async function sampleConcurrent(
  request: (loop: number, i: number) => Promise<void>,
  concurrency: number,
  durationMs: number,
): Promise<Samples & { requestsPerS: number }> {
  const ms: number[] = [];
  const start = now();
  const cpu = process.cpuUsage();
  await Promise.all(
    Array.from({ length: concurrency }, async (_, loop) => {
      for (let i = 0; i === 0 || now() - start < durationMs; i++) {
        const t = now();
        await request(loop, i);
        ms.push(now() - t);
      }
    }),
  );
  const elapsedMs = now() - start;
  return { ms, elapsedMs, nodeCpuPercent: cpuPercent(cpu, elapsedMs), requestsPerS: (ms.length / elapsedMs) * 1000 };
}

function cpuPercent(since: NodeJS.CpuUsage, elapsedMs: number): number {
  const used = process.cpuUsage(since);
  return Math.round(((used.user + used.system) / 1000 / elapsedMs) * 100);
}

/** Nearest-rank percentile (p in 0..100) of a sample, rounded to 0.1 ms. */
export function percentile(ms: number[], p: number): number {
  const sorted = [...ms].sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return round1(sorted[rank - 1]);
}

export function now(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}

export function round1(x: number): number {
  return Math.round(x * 10) / 10;
}

export function round3(x: number): number {
  return Math.round(x * 1000) / 1000;
}
