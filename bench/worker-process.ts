import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { WeftStack } from '../tests/support/weft-stack';

const REPO = path.resolve(__dirname, '..');
/** V8 old-space limit of the benchmarked worker (MB). */
const WORKER_HEAP_MB = 384;

/**
 * Which worker: the TypeScript sources through tsx (development), or the JavaScript of
 * `npm run build` in `buildDir` (production), which uses the workflow bundle built with it.
 */
export type WorkerKind = { kind: 'tsx' } | { kind: 'compiled'; buildDir: string };

/** A `weft worker` in its own OS process, so its memory is its own to measure. */
export interface WorkerProcess {
  child: ChildProcess;
  kind: WorkerKind['kind'];
  /** Resident set size now (VmRSS), in MB. */
  rssMb(): number;
  /** Peak resident set size so far (VmHWM), in MB. */
  peakRssMb(): number;
  stop(): Promise<void>;
}

export function spawnWorkerProcess(stack: WeftStack, worker: WorkerKind = { kind: 'tsx' }): Promise<WorkerProcess> {
  // A heap cap, as a deployment sets one: without it V8 on a 24 GB machine lets garbage pile
  // up (peak RSS then floats between 340 and 440 MB from run to run); with it, a worker that
  // held every record would run out of memory instead of passing.
  const heapCap = `--max-old-space-size=${WORKER_HEAP_MB}`;
  // WEFT_BENCH_CPU_PROF=<dir>: the worker writes a V8 CPU profile there when it stops.
  const profile = process.env.WEFT_BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.WEFT_BENCH_CPU_PROF}`] : [];
  const { WEFT_WORKFLOW_BUNDLE, ...stackEnv } = stack.env;
  const child =
    worker.kind === 'tsx'
      ? spawn(process.execPath, [heapCap, ...profile, '--import', 'tsx', 'app/worker/main.ts'], {
          cwd: REPO,
          env: { ...process.env, ...stackEnv, WEFT_WORKFLOW_BUNDLE, LOG_LEVEL: 'info' },
          stdio: ['ignore', 'pipe', 'pipe'],
        })
      : // As deployed: no WEFT_WORKFLOW_BUNDLE, the build's own bundle.
        spawn(process.execPath, [heapCap, ...profile, path.join(worker.buildDir, 'app', 'worker', 'main.js')], {
          cwd: REPO,
          env: { ...withoutNodeOptions(process.env), ...stackEnv, LOG_LEVEL: 'info' },
          stdio: ['ignore', 'pipe', 'pipe'],
        });
  return new Promise((resolve, reject) => {
    let output = '';
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('weft worker running')) {
        // Drain the rest without keeping it: the measurement is about the worker's memory.
        child.stdout!.off('data', onData);
        child.stderr!.off('data', onData);
        child.stdout!.resume();
        child.stderr!.resume();
        resolve({
          child,
          kind: worker.kind,
          rssMb: () => readRssMb(child.pid as number, 'VmRSS'),
          peakRssMb: () => readRssMb(child.pid as number, 'VmHWM'),
          stop: () =>
            new Promise<void>((done) => {
              if (child.exitCode !== null) return done();
              child.once('exit', () => done());
              child.kill('SIGTERM');
            }),
        });
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`worker exited early (${code}):\n${output}`)));
  });
}

function readRssMb(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1] ?? NaN);
  return Math.round((kb / 1024) * 10) / 10;
}

/** The bench itself runs under tsx; a compiled worker must not inherit its loader. */
function withoutNodeOptions(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const { NODE_OPTIONS: _tsxLoader, ...rest } = env;
  return rest;
}
