import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

/**
 * `npm start` runs node ← tsx ← sh ← npm. When something sends SIGTERM to npm alone (an IDE's
 * stop button, `kill <npm pid>`), npm forwards it to `sh`, and sh dies without passing it on:
 * tsx and this process would keep running with nobody to stop them. So, when started by an
 * npm script, the launching processes are watched, and their disappearance counts as a stop
 * request. (Not for a direct `weft start`: a `nohup weft start &` must survive its shell.)
 */
export function watchLaunchers(onGone: (description: string) => void, opts: { depth?: number; intervalMs?: number } = {}): { stop(): void } {
  const chain = ancestorChain(process.ppid, opts.depth ?? 3);
  if (chain.length === 0) return { stop() {} };
  const initialParent = process.ppid;
  const timer = setInterval(() => {
    const gone = process.ppid !== initialParent ? initialParent : chain.find((pid) => !isAlive(pid));
    if (gone === undefined) return;
    clearInterval(timer);
    onGone(`the process that launched npm start (pid ${gone}) has gone`);
  }, opts.intervalMs ?? 1_000);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}

/** pid, its parent, ... up to `depth` entries, never including init (pid 1). */
function ancestorChain(pid: number, depth: number): number[] {
  const chain: number[] = [];
  let current: number | undefined = pid;
  while (current !== undefined && current > 1 && chain.length < depth) {
    chain.push(current);
    current = parentOf(current);
  }
  return chain;
}

function parentOf(pid: number): number | undefined {
  try {
    // Linux: "pid (comm) state ppid ..."; comm may contain spaces and parentheses.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    return Number.isInteger(ppid) ? ppid : undefined;
  } catch {
    // no /proc (macOS): ask ps
  }
  try {
    const ppid = Number(execFileSync('ps', ['-o', 'ppid=', '-p', String(pid)], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim());
    return Number.isInteger(ppid) && ppid > 0 ? ppid : undefined;
  } catch {
    return undefined;
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
