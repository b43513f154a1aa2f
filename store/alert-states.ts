import type { Collection, Db } from 'mongodb';
import { isDuplicateKey } from './duplicate-key';
import { keyPrefix, prefixRange, timeKey, uniqueSuffix } from './key-range';
import { ensureExpiry, type ExpiryRule } from './ttl';

/** An episode not resolved after this long (its sync deleted, failing for a month) is forgotten; a new failure opens a new one. */
const ALERT_STATE_RETENTION_SECONDS = 30 * 86_400;

/**
 * What chat alerts remember of a failing sync (or connection): its open episode (from the
 * first failure after a success to the next success), each failure of it and each alert sent
 * for it. Every document is `_id`-keyed and written once by an insert, the one write that
 * decides between processes on FerretDB (two inserts of one `_id`: exactly one succeeds);
 * every read is one `_id` or one `_id` range (see key-range.ts):
 *   `e|<scope>`                             the scope's open episode (inserted by its first failure)
 *   `f|<episode>|<run>`                     one failure of the episode (a retried report writes it once)
 *   `a|<episode>|<code>|<index>`            the episode's `index`th alert for `code` (its sender inserted it)
 *   `x|<since>|<episode>|<scope>`           retention, where the server has no TTL
 */
export interface AlertEpisode {
  /** The scope (see `alertScope`) the episode is of. */
  scope: string;
  /** Random, written by the failure that opened it. */
  episode: string;
  since: Date;
}

export interface AlertFailure {
  run: string;
  code: string;
  at: Date;
}

export interface AlertMark {
  index: number;
  /** The failure that sent it. */
  run: string;
  at: Date;
  /** Failures of its code it accounted for (itself and those before it), counted before it was sent. */
  reported: number;
}

type AlertStateDoc =
  | { _id: string; kind: 'episode'; episode: string; since: Date; at: Date }
  | { _id: string; kind: 'failure'; code: string; at: Date }
  | { _id: string; kind: 'alert'; run: string; at: Date; reported: number }
  | { _id: string; kind: 'expiry'; at: Date };

const INDEX_DIGITS = 8;
/**
 * Documents one episode read returns at most: FerretDB pushes an `_id` range down only with a
 * sort and a limit. An episode this long (a sync failing every 30 s for over a month) is
 * counted up to it.
 */
const MAX_EPISODE_DOCS = 100_000;

/** A sync's scope (connection `_id`, sync, variant), or the connection's own (auth) when `sync` is null. */
export function alertScope(connection: string, sync: { name: string; variant: string } | null): string {
  return sync ? keyPrefix(connection, 's', sync.name, sync.variant) : keyPrefix(connection, 'c');
}

export class AlertStateStore {
  private readonly col: Collection<AlertStateDoc>;
  private writeExpiryKeys = true;

  constructor(db: Db) {
    this.col = db.collection<AlertStateDoc>('alert_states');
  }

  async ensureIndexes(): Promise<ExpiryRule[]> {
    const rule = await ensureExpiry(this.col, 'at', ALERT_STATE_RETENTION_SECONDS, { sweep: (cutoff) => this.sweepExpired(cutoff) });
    this.writeExpiryKeys = !rule.native;
    return [rule];
  }

  /** The scope's open episode, or null. */
  async episode(scope: string): Promise<AlertEpisode | null> {
    const doc = await this.col.findOne({ _id: `e|${scope}` });
    return doc?.kind === 'episode' ? { scope, episode: doc.episode, since: doc.since } : null;
  }

  /** The open episodes of these scopes, by scope, in one read (a run's end checks two). */
  async episodes(scopes: string[]): Promise<Map<string, AlertEpisode>> {
    const docs = await this.col.find({ _id: { $in: scopes.map((scope) => `e|${scope}`) } }).toArray();
    const open = new Map<string, AlertEpisode>();
    for (const doc of docs) if (doc.kind === 'episode') open.set(doc._id.slice(2), { scope: doc._id.slice(2), episode: doc.episode, since: doc.since });
    return open;
  }

  /** The scope's open episode, opened now (since `at`) if there is none: concurrent callers all get the same one. */
  async openEpisode(scope: string, at: Date): Promise<AlertEpisode> {
    const existing = await this.episode(scope);
    if (existing) return existing;
    const episode = uniqueSuffix();
    if (this.writeExpiryKeys) await this.col.insertOne({ _id: `x|${timeKey(at)}|${episode}|${scope}`, kind: 'expiry', at });
    try {
      await this.col.insertOne({ _id: `e|${scope}`, kind: 'episode', episode, since: at, at });
      return { scope, episode, since: at };
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
      const winner = await this.episode(scope);
      if (!winner) throw err;
      return winner;
    }
  }

  /** Counts the failure into the episode; a second report of the same run changes nothing. */
  async recordFailure(ep: AlertEpisode, failure: AlertFailure): Promise<void> {
    try {
      await this.col.insertOne({ _id: `f|${ep.episode}|${encodeURIComponent(failure.run)}`, kind: 'failure', code: failure.code, at: failure.at });
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
    }
  }

  /** Every failure of the episode. */
  async failures(ep: AlertEpisode): Promise<AlertFailure[]> {
    const prefix = `f|${ep.episode}|`;
    const docs = await this.col
      .find({ _id: prefixRange(prefix) })
      .sort({ _id: 1 })
      .limit(MAX_EPISODE_DOCS)
      .toArray();
    return docs.flatMap((d) => (d.kind === 'failure' ? [{ run: decodeURIComponent(d._id.slice(prefix.length)), code: d.code, at: d.at }] : []));
  }

  /** The alerts sent for `code` in the episode, oldest first. */
  async alerts(ep: AlertEpisode, code: string): Promise<AlertMark[]> {
    const prefix = `a|${ep.episode}|${keyPrefix(code)}`;
    const docs = await this.col
      .find({ _id: prefixRange(prefix) })
      .sort({ _id: 1 })
      .limit(MAX_EPISODE_DOCS)
      .toArray();
    return docs.flatMap((d) => (d.kind === 'alert' ? [{ index: Number(d._id.slice(prefix.length)), run: d.run, at: d.at, reported: d.reported }] : []));
  }

  /**
   * Takes the episode's `index`th alert for `code` for this run. True when this run holds it
   * (it inserted it now, or an earlier try of the same report did): exactly one of several
   * processes racing for it gets true.
   */
  async claimAlert(ep: AlertEpisode, code: string, index: number, mark: Omit<AlertMark, 'index'>): Promise<boolean> {
    const _id = `a|${ep.episode}|${keyPrefix(code)}${String(index).padStart(INDEX_DIGITS, '0')}`;
    try {
      await this.col.insertOne({ _id, kind: 'alert', run: mark.run, at: mark.at, reported: mark.reported });
      return true;
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
      const doc = await this.col.findOne({ _id });
      return doc?.kind === 'alert' && doc.run === mark.run;
    }
  }

  /** Ends the episode (the sync succeeded): the scope's next failure opens a new one. */
  async closeEpisode(ep: AlertEpisode): Promise<void> {
    await this.col.deleteOne({ _id: `e|${ep.scope}`, episode: ep.episode } as never);
    await this.removeEpisodeDocs(ep.episode);
  }

  private async removeEpisodeDocs(episode: string): Promise<void> {
    for (const prefix of [`f|${episode}|`, `a|${episode}|`]) {
      const ids = (
        await this.col
          .find({ _id: prefixRange(prefix) }, { projection: { _id: 1 } })
          .sort({ _id: 1 })
          .limit(MAX_EPISODE_DOCS)
          .toArray()
      ).map((d) => d._id);
      if (ids.length > 0) await this.col.deleteMany({ _id: { $in: ids } });
    }
  }

  /** Forgets episodes opened before `cutoff`, read from their retention keys. */
  private async sweepExpired(cutoff: Date): Promise<number> {
    const keys = await this.col
      .find({ _id: { $gte: 'x|', $lt: `x|${timeKey(cutoff)}` } })
      .sort({ _id: 1 })
      .limit(500)
      .toArray();
    for (const key of keys) {
      const [, , episode, ...scopeParts] = key._id.split('|');
      const scope = scopeParts.join('|');
      await this.col.deleteOne({ _id: `e|${scope}`, episode } as never);
      await this.removeEpisodeDocs(episode);
      await this.col.deleteOne({ _id: key._id });
    }
    return keys.length;
  }
}
