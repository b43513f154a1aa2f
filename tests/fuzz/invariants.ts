import { createHash } from 'node:crypto';
import type { Db } from 'mongodb';
import stringify from 'safe-stable-stringify';
import type { Secret } from './fixture';
import type { RawResponse } from './raw-request';

/**
 * What must hold for every answer of the fuzz: no 5xx, a JSON error carries a code, no
 * secret where it does not belong, and (checked per batch) a refused request leaves the
 * database as it was.
 */
export function answerProblems(method: string, route: string, res: RawResponse, secrets: Secret[]): string[] {
  const problems: string[] = [];
  if (res.status >= 500) problems.push(`answered ${res.status}${res.json?.error?.code ? ` ${res.json.error.code}` : ''}`);
  // Every refusal says why with a stable code: `error.code` in JSON, `data-error-code` on a page.
  // (HEAD answers carry the GET answer's headers and no body.)
  if (method !== 'HEAD' && res.status >= 400 && errorCodeOf(res) === undefined) problems.push(`answered ${res.status} without an error code`);
  const carried = `${res.text}\n${Object.entries(res.headers)
    .map(([k, v]) => `${k}: ${String(v)}`)
    .join('\n')}`;
  for (const secret of secrets) {
    if (carried.includes(secret.value) && !secret.allowedIn?.(route, res.status)) problems.push(`echoed the ${secret.name}`);
  }
  return problems;
}

/**
 * Collections that record an attempt by design, or are logs: a refused request may write
 * there (the third-party request log and its hourly sums, a failed-auth webhook delivery, a claimed connect
 * attempt, the API rate counters, Luma's request budget, a token-refresh lease).
 */
const UNCHECKED_COLLECTIONS = [
  /^request_logs$/,
  // The log's calls per hour: summed by each process every few seconds, whatever else is going on.
  /^request_log_hours$/,
  /^webhook_deliveries$/,
  /^connect_session_attempts$/,
  /^api_rate/,
  /^rate_budget/,
  /^connection_refresh_leases$/,
  /^system\./,
];

/** A digest of every document of every checked collection, by collection and `_id`. */
export type Snapshot = Map<string, Map<string, string>>;

export async function snapshot(db: Db): Promise<Snapshot> {
  const out: Snapshot = new Map();
  const names = (await db.listCollections({}, { nameOnly: true }).toArray()).map((c) => c.name).filter((n) => !UNCHECKED_COLLECTIONS.some((re) => re.test(n)));
  for (const name of names.sort()) {
    const docs = new Map<string, string>();
    for (const doc of await db.collection(name).find({}).toArray()) {
      docs.set(
        String(doc._id),
        createHash('sha256')
          .update(stringify(doc) ?? '')
          .digest('hex'),
      );
    }
    out.set(name, docs);
  }
  return out;
}

/** What changed between two snapshots, one line per collection (empty when nothing did). */
export function snapshotDiff(before: Snapshot, after: Snapshot): string[] {
  const lines: string[] = [];
  for (const name of new Set([...before.keys(), ...after.keys()])) {
    const a = before.get(name) ?? new Map<string, string>();
    const b = after.get(name) ?? new Map<string, string>();
    const added = [...b.keys()].filter((id) => !a.has(id));
    const removed = [...a.keys()].filter((id) => !b.has(id));
    const changed = [...b.keys()].filter((id) => a.has(id) && a.get(id) !== b.get(id));
    if (added.length || removed.length || changed.length) {
      const ids = (xs: string[]) => xs.slice(0, 3).join(', ') + (xs.length > 3 ? ', …' : '');
      lines.push(`${name}: ${added.length} added [${ids(added)}], ${removed.length} removed [${ids(removed)}], ${changed.length} changed [${ids(changed)}]`);
    }
  }
  return lines;
}

/** Secrets that appear in the captured logs (a secret key, a stored credential, a session token). */
export function secretsInLogs(lines: string[], secrets: Secret[]): string[] {
  const text = lines.join('\n');
  return secrets.filter((s) => text.includes(s.value)).map((s) => s.name);
}

/** The stable code of an error answer: JSON `error.code`, or the page's `data-error-code`. */
export function errorCodeOf(res: RawResponse): string | undefined {
  if (typeof res.json?.error?.code === 'string') return res.json.error.code;
  return /data-error-code="([^"]+)"/.exec(res.text)?.[1];
}
