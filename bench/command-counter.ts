import type { CommandStartedEvent, CommandSucceededEvent, Document, MongoClient } from 'mongodb';

/** Commands one client sent, by `<command> <collection>`, and the documents they returned or wrote. */
export interface CommandCounts {
  commands: number;
  byKind: Record<string, number>;
  documentsRead: number;
  documentsWritten: number;
}

/**
 * Counts what a MongoClient created with `monitorCommands` sends, until `stop()`: the bench's
 * view of one operation's database work, by command and collection. Documents read are those
 * of the replies' first and next batches; written, those of inserts and the `n` of updates
 * and deletes.
 */
export function countCommands(client: MongoClient): { snapshot(): CommandCounts; stop(): void } {
  const counts: CommandCounts = { commands: 0, byKind: {}, documentsRead: 0, documentsWritten: 0 };
  const kinds = new Map<number, string>();
  const onStart = (e: CommandStartedEvent) => {
    if (['hello', 'isMaster', 'ping', 'endSessions', 'saslStart', 'saslContinue'].includes(e.commandName)) return;
    const collection = e.commandName === 'getMore' ? String(e.command.collection ?? '') : String(e.command[e.commandName] ?? '');
    const kind = `${e.commandName} ${collection}`;
    counts.commands += 1;
    counts.byKind[kind] = (counts.byKind[kind] ?? 0) + 1;
    kinds.set(e.requestId, e.commandName);
  };
  const onSucceeded = (e: CommandSucceededEvent) => {
    const name = kinds.get(e.requestId);
    kinds.delete(e.requestId);
    if (name === undefined) return;
    const reply = e.reply as Document;
    if (name === 'find' || name === 'aggregate') counts.documentsRead += reply.cursor?.firstBatch?.length ?? 0;
    else if (name === 'getMore') counts.documentsRead += reply.cursor?.nextBatch?.length ?? 0;
    else if (name === 'findAndModify') counts.documentsRead += reply.value ? 1 : 0;
    else if (name === 'insert' || name === 'update' || name === 'delete') counts.documentsWritten += Number(reply.n ?? 0);
  };
  client.on('commandStarted', onStart);
  client.on('commandSucceeded', onSucceeded);
  return {
    snapshot: () => ({ ...counts, byKind: { ...counts.byKind } }),
    stop: () => {
      client.off('commandStarted', onStart);
      client.off('commandSucceeded', onSucceeded);
    },
  };
}

/** `after - before`, per kind; kinds that did not move are left out. */
export function difference(after: CommandCounts, before: CommandCounts): CommandCounts {
  const byKind: Record<string, number> = {};
  for (const [kind, n] of Object.entries(after.byKind)) {
    const d = n - (before.byKind[kind] ?? 0);
    if (d !== 0) byKind[kind] = d;
  }
  return {
    commands: after.commands - before.commands,
    byKind,
    documentsRead: after.documentsRead - before.documentsRead,
    documentsWritten: after.documentsWritten - before.documentsWritten,
  };
}
