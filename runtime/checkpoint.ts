import { createHash } from 'node:crypto';
import stringify from 'safe-stable-stringify';
import type { PageState } from './paginate';
import type { RequestConfig } from './types';

/**
 * Progress of one sync attempt, sent with each activity heartbeat. A retried attempt
 * (after a crash or a durable rate-limit wait) reads it back from the heartbeat details
 * and resumes every saving listing where it stopped.
 */
export interface AttemptCheckpoint {
  version: 1;
  /** Per listing: the state after the last page whose records were saved, or its end. */
  pages: Record<string, PageState | FinishedListing>;
  savedRecords: number;
  /** Models the run declared with ctx.trackDeletes (kept so a resumed attempt still knows). */
  trackDeletes?: string[];
  /** The integration's exec finished: an attempt retried after this only ends the run. */
  execDone?: boolean;
}

/** A listing an earlier attempt completed, with what its last page said besides items. */
export interface FinishedListing {
  type: 'done';
  end: Record<string, unknown>;
}

function emptyCheckpoint(): AttemptCheckpoint {
  return { version: 1, pages: {}, savedRecords: 0, trackDeletes: [] };
}

export function readCheckpoint(details: unknown): AttemptCheckpoint {
  const c = details as Partial<AttemptCheckpoint> | undefined;
  if (!c || c.version !== 1 || typeof c.pages !== 'object' || c.pages === null) return emptyCheckpoint();
  const pages: AttemptCheckpoint['pages'] = {};
  // Checkpoints written before listings kept their end said just 'done'.
  for (const [key, state] of Object.entries(c.pages)) pages[key] = (state as unknown) === 'done' ? { type: 'done', end: {} } : state;
  return {
    version: 1,
    pages,
    savedRecords: c.savedRecords ?? 0,
    trackDeletes: [...(c.trackDeletes ?? [])],
    ...(c.execDone === true ? { execDone: true } : {}),
  };
}

/** Identifies a listing by what it asks for, so the same call in the next attempt finds its state. */
export function listingKey(config: RequestConfig): string {
  const identity = { method: config.method ?? 'GET', endpoint: config.endpoint, params: config.params ?? {} };
  return createHash('sha256')
    .update(stringify(identity) ?? '')
    .digest('hex')
    .slice(0, 16);
}
