import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import type { WeftStack } from './weft-stack';

const REPO = path.resolve(__dirname, '../..');

export interface WeftProcess {
  child: ChildProcess;
  /** stdout and stderr so far. */
  output(): string;
  /** Resolves with the exit code once the process has ended. */
  exited: Promise<number | null>;
}

/** Runs `weft <command>` (cli/weft.ts, as the `weft` executable does without a build) as an OS process of its own. */
export function spawnWeft(command: string, env: NodeJS.ProcessEnv): WeftProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', 'cli/weft.ts', command], { cwd: REPO, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, output: () => output, exited };
}

/** The first JSON log line with this message, once the process has written it. */
export async function logLine(p: WeftProcess, msg: string, timeoutMs = 60_000): Promise<Record<string, unknown>> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    for (const line of p.output().split('\n')) {
      if (!line.includes(msg)) continue;
      const parsed = JSON.parse(line) as Record<string, unknown>;
      if (parsed.msg === msg) return parsed;
    }
    if (p.child.exitCode !== null) throw new Error(`the process exited (${p.child.exitCode}) before logging "${msg}":\n${p.output()}`);
    if (Date.now() > end) throw new Error(`no "${msg}" within ${timeoutMs} ms:\n${p.output()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** `app/worker/main.ts` as its own OS process on the stack's configuration, resolved once it polls (so it can be killed for real). */
export function spawnWorker(stack: WeftStack): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'app/worker/main.ts'], {
    cwd: REPO,
    env: { ...process.env, ...stack.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return new Promise((resolve, reject) => {
    let output = '';
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('weft worker running')) resolve(child);
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`worker exited early (${code}):\n${output}`)));
  });
}
