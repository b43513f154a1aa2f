import { open, readFile, stat, unlink } from 'node:fs/promises';

/** What a lock file records about the process that holds it. */
export interface LockHolder {
  pid: number;
  startedAt?: string;
}

export type LockAttempt =
  | { acquired: true; release(): Promise<void> }
  /** Held by a live process; `holder` is undefined while its file is still being written. */
  | { acquired: false; holder?: LockHolder };

/**
 * One attempt at a lock file created with O_EXCL, holding this process's pid. A lock whose
 * process is gone (a build or a server start killed by SIGKILL) is broken and taken over, so
 * a crash never blocks the next run; `onStale` hears about it.
 */
export async function tryAcquirePidLock(lockFile: string, onStale: (holder: LockHolder) => void = () => {}): Promise<LockAttempt> {
  for (;;) {
    try {
      const handle = await open(lockFile, 'wx');
      await handle.writeFile(JSON.stringify({ pid: process.pid, startedAt: new Date().toISOString() } satisfies LockHolder));
      await handle.close();
      return { acquired: true, release: () => unlink(lockFile).catch(() => {}) };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const holder = await readLockHolder(lockFile);
    if (holder && !isProcessAlive(holder.pid)) {
      onStale(holder);
      await unlink(lockFile).catch(() => {});
      continue;
    }
    return { acquired: false, holder };
  }
}

async function readLockHolder(lockFile: string): Promise<LockHolder | undefined> {
  try {
    const parsed = JSON.parse(await readFile(lockFile, 'utf8')) as { pid?: unknown; startedAt?: unknown };
    if (typeof parsed.pid === 'number') return { pid: parsed.pid, startedAt: typeof parsed.startedAt === 'string' ? parsed.startedAt : undefined };
  } catch {
    // Being written right now, or removed: treat as held and look again shortly. A lock
    // that stays unreadable is old junk; break it after a minute.
    const info = await stat(lockFile).catch(() => undefined);
    if (info && Date.now() - info.mtimeMs > 60_000) return { pid: -1 };
  }
  return undefined;
}

function isProcessAlive(pid: number): boolean {
  if (pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
