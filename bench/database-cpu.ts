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
  let pid: string | undefined;
  try {
    // The server itself, whose own argument it is (its supervisor carries it inside a JSON string).
    pid = readdirSync('/proc').find((p) => /^\d+$/.test(p) && readArgs(p).includes(`--listen-addr=127.0.0.1:${port}`));
  } catch {
    return null;
  }
  if (!pid) return null;
  const found = pid;
  /** CPU seconds used so far (user + system). */
  return () => {
    // Fields after the command name, which is in parentheses and may hold spaces.
    const fields = readFileSync(`/proc/${found}/stat`, 'utf8').split(') ')[1].split(' ');
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
