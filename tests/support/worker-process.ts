import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import type { WeftStack } from './weft-stack';

const REPO = path.resolve(__dirname, '../..');

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

/** Polls `check` every 50 ms until it holds, or fails naming `what` after `timeoutMs`. */
export async function waitFor(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
