import type { Db } from 'mongodb';
import { RunBatches } from './record-batches';
import { RecordCounters } from './record-counters';
import { RecordFeed } from './record-feed';
import { RecordIndex } from './record-index';
import { RecordVersions } from './record-versions';

/**
 * The collections of the records engine, one owner each: the stored versions, the scopes'
 * counters, the runs' batch logs, the writers' index and the readers' change feed. The
 * writer, the finish of a run, pages, pruning and migrations are built on these.
 */
export interface RecordParts {
  versions: RecordVersions;
  counters: RecordCounters;
  batches: RunBatches;
  index: RecordIndex;
  feed: RecordFeed;
}

export function recordParts(db: Db): RecordParts {
  return {
    versions: new RecordVersions(db),
    counters: new RecordCounters(db),
    batches: new RunBatches(db),
    index: new RecordIndex(db),
    feed: new RecordFeed(db),
  };
}
