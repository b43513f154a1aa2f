import type { CommandStartedEvent, Document, MongoClient } from 'mongodb';

/** One read or write a client sent, with the filter it selected documents by. */
export interface FilteredCommand {
  command: string;
  collection: string;
  filter: Document;
}

/** The filters of every find / count / update / delete / findAndModify / aggregate the client sends until stop(). */
export function recordFilters(client: MongoClient): { commands: FilteredCommand[]; stop(): void } {
  const commands: FilteredCommand[] = [];
  const listener = (e: CommandStartedEvent) => {
    const c = e.command;
    const collection = String(c[e.commandName] ?? '');
    const add = (filter: Document | undefined) => commands.push({ command: e.commandName, collection, filter: filter ?? {} });
    switch (e.commandName) {
      case 'find':
        add(c.filter);
        break;
      case 'count':
      case 'findAndModify':
        add(c.query);
        break;
      case 'update':
        for (const u of c.updates ?? []) add(u.q);
        break;
      case 'delete':
        for (const d of c.deletes ?? []) add(d.q);
        break;
      case 'aggregate':
        add({ $pipeline: c.pipeline });
        break;
      default:
    }
  };
  client.on('commandStarted', listener);
  return { commands, stop: () => client.off('commandStarted', listener) };
}

/**
 * Whether a filter selects through the `_id` index on FerretDB's SQLite backend (with the
 * project's patches) as on MongoDB: an `_id` equality, which is pushed down whatever other
 * conditions sit beside it (those are checked on the one document read), or a filter that is
 * exactly an `_id` `$in` or an `_id` range (`$gt`/`$gte`/`$lt`/`$lte`). Anything else reads
 * the whole collection there.
 */
export function selectsByIdOnly(filter: Document): boolean {
  if (!Object.prototype.hasOwnProperty.call(filter, '_id')) return false;
  const v = filter._id;
  if (typeof v !== 'object' || v === null) return true;
  if (Object.keys(filter).length !== 1) return false;
  const ops = Object.keys(v);
  if (ops.length === 1 && ops[0] === '$in') return Array.isArray(v.$in);
  return ops.length > 0 && ops.every((op) => ['$gt', '$gte', '$lt', '$lte'].includes(op));
}
