import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { GRAPH_DEFAULT_ACCESS_TOKEN } from '../sandbox/graph';
import { connectOneDrive, createOneDriveIntegration, startWeftStack } from '../tests/support/weft-stack';
import type { Figure } from './figure';
import { now, percentile, round1, sampleConcurrent } from './timing';

const REPO = path.resolve(__dirname, '..');
const MB = 1024 * 1024;
const SEQUENTIAL = 300;
const CONCURRENCY = 32;
const CONCURRENT_MS = 5_000;

/**
 * The proxy's cost against calling the provider directly, side by side in one run, with the
 * API as a process of its own (`weft api`, as deployed) in front of the Graph simulator:
 * - added latency at concurrency 1: `GET /proxy/v1.0/me` against `GET <graph>/v1.0/me`, the
 *   two interleaved, SEQUENTIAL each (p50 and p99 of each, and their differences);
 * - throughput at concurrency 32 for CONCURRENT_MS each, as a ratio of proxied to direct;
 * - the API process's peak RSS while a file of at least 50 MB streams through it.
 * Beside them, what the rates come from: the CPU per call of each process (this one, client
 * and simulator; the API; FerretDB), how busy this process is in the direct phase (one
 * thread: near 100 %, the direct rate is this process's), the cores all three use while
 * proxying, and the database commands per proxied call (FerretDB's own counters).
 */
export async function proxyOverhead(): Promise<Figure[]> {
  const stack = await startWeftStack({
    worker: false,
    graph: { seed: 1, drives: [{ fileCount: 200 }] },
    temporalCallTimeoutMs: 10_000,
    // Counted as by default (blocks of 16 requests), but high enough that a fast proxy is not
    // refused: the default 6,000 a minute is ~1,100 requests a second over the load phase.
    apiRateLimit: { limit: 1_000_000, windowMs: 60_000 },
  });
  const api = await spawnApi(stack.env);
  try {
    await createOneDriveIntegration(stack);
    const created = await connectOneDrive(stack, 'bench-proxy');
    if (created.status !== 201) throw new Error(`connection: ${created.status} ${JSON.stringify(created.body)}`);
    const direct = { url: `${stack.graph.url}/v1.0/me`, headers: { authorization: `Bearer ${GRAPH_DEFAULT_ACCESS_TOKEN}` } };
    const proxied = {
      url: `${api.url}/proxy/v1.0/me`,
      headers: { authorization: `Bearer ${stack.keys.dev}`, 'connection-id': 'bench-proxy', 'provider-config-key': 'one-drive' },
    };
    const get = async (target: { url: string; headers: Record<string, string> }) => {
      const res = await fetch(target.url, { headers: target.headers });
      await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`${target.url}: HTTP ${res.status}`);
    };

    // Warm both paths (connections, caches), then interleave so drift hits both alike.
    for (let i = 0; i < 20; i++) await Promise.all([get(direct), get(proxied)]);
    const seq = { direct: [] as number[], proxied: [] as number[] };
    for (let i = 0; i < SEQUENTIAL; i++) {
      for (const [name, target] of [
        ['direct', direct],
        ['proxied', proxied],
      ] as const) {
        const t = now();
        await get(target);
        seq[name].push(now() - t);
      }
    }
    // CPU per request of each process, to tell a slow proxy from a machine too small for both:
    // this process (bench client and simulator) and the API process, over each load phase.
    // FerretDB's too (when the bench started it), which writes every call's request-log entry.
    const dbPid = databaseServerPid(stack.env.MONGODB_URI);
    const metricsUrl = dbPid === null ? null : databaseMetricsUrl(dbPid);
    const apiCpuBefore = readCpuMs(api.child.pid!);
    const directLoad = await sampleConcurrent(() => get(direct), CONCURRENCY, CONCURRENT_MS);
    const apiCpuMid = readCpuMs(api.child.pid!);
    const dbCpuMid = dbPid === null ? NaN : readCpuMs(dbPid);
    const commandsBefore = metricsUrl === null ? null : await databaseCommands(metricsUrl);
    // Monotonic clock (the one V8's profile timestamps use), to cut the API's profile to this phase.
    const proxiedFromUs = Number(process.hrtime.bigint() / 1000n);
    const proxiedLoad = await sampleConcurrent(() => get(proxied), CONCURRENCY, CONCURRENT_MS);
    const proxiedToUs = Number(process.hrtime.bigint() / 1000n);
    const apiCpuAfter = readCpuMs(api.child.pid!);
    const dbCpuAfter = dbPid === null ? NaN : readCpuMs(dbPid);
    const commandsAfter = metricsUrl === null ? null : await databaseCommands(metricsUrl);
    const proxiedCalls = Math.round((proxiedLoad.requestsPerS * proxiedLoad.elapsedMs) / 1000);
    // Every command the server got over the proxied phase (the API's: nothing else runs then), per call.
    const commandsPerCall =
      commandsBefore === null || commandsAfter === null
        ? null
        : Object.fromEntries(
            Object.entries(commandsAfter)
              .map(([name, n]) => [name, Math.round(((n - (commandsBefore[name] ?? 0)) / proxiedCalls) * 1000) / 1000] as const)
              .filter(([, n]) => n > 0),
          );
    const perRequest = (cpuMs: number, load: { requestsPerS: number; elapsedMs: number }) =>
      Math.round((cpuMs / ((load.requestsPerS * load.elapsedMs) / 1000)) * 1000) / 1000;

    // The smallest file of at least 50 MB, through the proxy, while the API's RSS is sampled.
    const file = stack.graph
      .items()
      .filter((i: any) => i.file && i.size >= 50 * MB)
      .sort((a: any, b: any) => a.size - b.size)[0] as any;
    const driveId = stack.graph.drives()[0].id;
    const rssBefore = readRssMb(api.child.pid!);
    let peak = rssBefore;
    const sampler = setInterval(() => (peak = Math.max(peak, readRssMb(api.child.pid!))), 20);
    const t = now();
    const res = await fetch(`${api.url}/proxy/v1.0/drives/${encodeURIComponent(driveId)}/items/${encodeURIComponent(file.id)}/content`, {
      headers: proxied.headers,
    });
    let bytes = 0;
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) bytes += chunk.length;
    const downloadMs = now() - t;
    clearInterval(sampler);
    peak = Math.max(peak, readRssMb(api.child.pid!));
    if (res.status !== 200 || bytes !== file.size) throw new Error(`download: HTTP ${res.status}, ${bytes} of ${file.size} bytes`);

    const p = (xs: number[], q: number) => percentile(xs, q);
    return [
      {
        figure: 'proxy_overhead',
        route: 'GET /proxy/v1.0/me (one-drive) vs GET <graph simulator>/v1.0/me',
        api: 'weft api in its own process',
        sequential_requests_each: SEQUENTIAL,
        direct_p50_ms: p(seq.direct, 50),
        direct_p99_ms: p(seq.direct, 99),
        proxied_p50_ms: p(seq.proxied, 50),
        proxied_p99_ms: p(seq.proxied, 99),
        added_p50_ms: round1(p(seq.proxied, 50) - p(seq.direct, 50)),
        added_p99_ms: round1(p(seq.proxied, 99) - p(seq.direct, 99)),
        concurrency: CONCURRENCY,
        direct_requests_per_s: round1(directLoad.requestsPerS),
        proxied_requests_per_s: round1(proxiedLoad.requestsPerS),
        throughput_ratio: Math.round((proxiedLoad.requestsPerS / directLoad.requestsPerS) * 100) / 100,
        // Near 100 %: the bench process (client and simulator, one thread) sets the direct rate.
        bench_process_cpu_percent_direct: directLoad.nodeCpuPercent,
        bench_process_cpu_ms_per_request_direct: perRequest((directLoad.nodeCpuPercent / 100) * directLoad.elapsedMs, directLoad),
        bench_process_cpu_ms_per_request_proxied: perRequest((proxiedLoad.nodeCpuPercent / 100) * proxiedLoad.elapsedMs, proxiedLoad),
        api_process_cpu_ms_per_request: perRequest(apiCpuAfter - apiCpuMid, proxiedLoad),
        api_process_cpu_ms_idle_during_direct: Math.round(apiCpuMid - apiCpuBefore),
        database_process_cpu_ms_per_request: dbPid === null ? null : perRequest(dbCpuAfter - dbCpuMid, proxiedLoad),
        database_commands_per_proxied_call: commandsPerCall,
        // The three processes over the proxied phase, in cores: near the machine's count, the
        // rate is what the machine can do for client, simulator and Weft together.
        cpu_cores_used_proxied:
          dbPid === null
            ? null
            : round2(
                ((proxiedLoad.nodeCpuPercent / 100) * proxiedLoad.elapsedMs + (apiCpuAfter - apiCpuMid) + (dbCpuAfter - dbCpuMid)) / proxiedLoad.elapsedMs,
              ),
        // Weft's own cost (API and database), whatever the client and the provider cost.
        weft_cpu_ms_per_proxied_call: dbPid === null ? null : perRequest(apiCpuAfter - apiCpuMid + (dbCpuAfter - dbCpuMid), proxiedLoad),
        ...(process.env.WEFT_BENCH_CPU_PROF ? { api_profile_proxied_phase_us: [proxiedFromUs, proxiedToUs] } : {}),
        targets: 'added p50 <= 0.5 ms; throughput ratio >= 0.6',
        pass: p(seq.proxied, 50) - p(seq.direct, 50) <= 0.5 && proxiedLoad.requestsPerS / directLoad.requestsPerS >= 0.6,
      },
      {
        figure: 'proxy_streaming_memory',
        file_mb: round1(file.size / MB),
        download_ms: Math.round(downloadMs),
        api_rss_before_mb: rssBefore,
        api_rss_peak_mb: peak,
        api_rss_growth_mb: round1(peak - rssBefore),
      },
    ];
  } finally {
    await stopProcess(api.child);
    await stack.shutdown();
  }
}

/** `weft api` (cli/weft.ts under tsx) on a free port, with the stack's configuration. */
function spawnApi(env: Record<string, string>): Promise<{ child: ChildProcess; url: string }> {
  // WEFT_BENCH_CPU_PROF=<dir>: the API process writes a V8 CPU profile there when it stops.
  const profile = process.env.WEFT_BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.WEFT_BENCH_CPU_PROF}`] : [];
  const child = spawn(process.execPath, [...profile, '--import', 'tsx', 'cli/weft.ts', 'api'], {
    cwd: REPO,
    env: { ...process.env, ...env, PORT: '0', LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return new Promise((resolve, reject) => {
    let output = '';
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const line = output.split('\n').find((l) => l.includes('weft api listening'));
      if (!line) return;
      child.stdout!.off('data', onData);
      child.stdout!.resume();
      child.stderr!.resume();
      resolve({ child, url: String((JSON.parse(line) as { url: string }).url) });
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (c: Buffer) => (output += c.toString()));
    child.once('exit', (code) => reject(new Error(`weft api exited early (${code}):\n${output}`)));
  });
}

function stopProcess(child: ChildProcess): Promise<void> {
  return new Promise((done) => {
    if (child.exitCode !== null) return done();
    child.once('exit', () => done());
    child.kill('SIGTERM');
  });
}

/** The FerretDB process listening on the URI's port (found by its command line), or null (another server). */
function databaseServerPid(uri: string | undefined): number | null {
  const port = uri ? /:(\d+)(?:\/|$)/.exec(new URL(uri).host + '/')?.[1] : undefined;
  if (!port) return null;
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      if (args[0]?.endsWith('ferretdb') && args.includes(`--listen-addr=127.0.0.1:${port}`)) return Number(pid);
    } catch {
      // gone meanwhile
    }
  }
  return null;
}

/** FerretDB's metrics endpoint (its `--debug-addr`), from its command line. */
function databaseMetricsUrl(pid: number): string | null {
  const arg = readFileSync(`/proc/${pid}/cmdline`, 'utf8')
    .split('\0')
    .find((a) => a.startsWith('--debug-addr='));
  return arg ? `http://${arg.slice('--debug-addr='.length)}/debug/metrics` : null;
}

/** Commands FerretDB has received so far, by name (its `ferretdb_client_requests_total`), without the connection's own. */
async function databaseCommands(url: string): Promise<Record<string, number>> {
  const text = await (await fetch(url)).text();
  const counts: Record<string, number> = {};
  for (const m of text.matchAll(/^ferretdb_client_requests_total\{command="([^"]+)"[^}]*\} (\d+)$/gm)) {
    if (['hello', 'isMaster', 'ismaster', 'ping', 'endSessions', 'buildInfo'].includes(m[1])) continue;
    counts[m[1]] = (counts[m[1]] ?? 0) + Number(m[2]);
  }
  return counts;
}

function round2(x: number): number {
  return Math.round(x * 100) / 100;
}

/** User + system CPU time of a process so far (/proc/<pid>/stat, clock ticks of 10 ms). */
function readCpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8')
    .replace(/^.*\) /, '')
    .split(' ');
  // After the command name: state is field 3, utime 14 and stime 15 (1-based, man 5 proc).
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

function readRssMb(pid: number): number {
  const kb = Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN);
  return round1(kb / 1024);
}
