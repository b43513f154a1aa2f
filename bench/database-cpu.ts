import { readdirSync, readFileSync } from 'node:fs';

/** Linux's USER_HZ: /proc reports CPU time in these ticks (100 on every mainstream build). */
const TICKS_PER_S = 100;

/**
 * CPU time of the local database server listening on the port of `mongodbUri` (the FerretDB
 * the bench started), read from /proc; null when there is no such local process (an
 * external server, or not Linux). Tells whether the database or the Node side sets the pace.
 */
export function databaseCpuClock(mongodbUri: string): (() => number) | null {
  const port = /:(\d+)(\/|$|\?)/.exec(mongodbUri.replace(/^mongodb:\/\/[^@]*@/, 'mongodb://'))?.[1];
  if (!port) return null;
  // The server itself, whose own argument it is (its supervisor carries it inside a JSON string).
  return processCpuClock((args) => args.includes(`--listen-addr=127.0.0.1:${port}`));
}

/** CPU time of the local Temporal dev server answering at `address` (host:port), as databaseCpuClock. */
export function temporalCpuClock(address: string): (() => number) | null {
  const port = /:(\d+)$/.exec(address)?.[1];
  if (!port) return null;
  return processCpuClock((args) => args.includes('start-dev') && args[args.indexOf('--port') + 1] === port && !args.some((a) => a.includes('{')));
}

/** CPU seconds (user + system) so far of the first process whose arguments match, or null. */
function processCpuClock(matches: (args: string[]) => boolean): (() => number) | null {
  let pid: string | undefined;
  try {
    pid = readdirSync('/proc').find((p) => /^\d+$/.test(p) && matches(readArgs(p)));
  } catch {
    return null;
  }
  if (!pid) return null;
  return pidCpuClock(Number(pid));
}

/** CPU seconds (user + system) so far of process `pid`. */
export function pidCpuClock(pid: number): () => number {
  return () => {
    // Fields after the command name, which is in parentheses and may hold spaces.
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_S;
  };
}

function readArgs(pid: string): string[] {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
  } catch {
    return [];
  }
}
