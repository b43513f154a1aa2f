import { prefixRange } from './key-range';
import type { RecordScope } from './record-doc';

/** The parts of a scope its keys are made of (the environment is a field, checked on read). */
export type ScopeParts = Pick<RecordScope, 'connection' | 'model' | 'variant'>;

/** A record's `_id`: unique per scope and id, and unambiguous (each part is encoded). */
export function recordKey(scope: ScopeParts, id: string): string {
  return [scope.connection, scope.model, scope.variant, id].map(encodeURIComponent).join('|');
}

/**
 * The scope's own key, `conn|model|variant|`: its counter's `_id`, and the prefix of every
 * key of the scope (records, feed packs, index chunks, swaps, batches).
 */
export function scopeKey(scope: ScopeParts): string {
  return recordKey(scope, '');
}

/** A scope's records: their `_id`s (recordKey) share the scope's key as prefix. */
export function scopeRange(scope: ScopeParts) {
  return { _id: prefixRange(scopeKey(scope)) };
}

/** The key prefix of a connection, or of its model, or of one scope (the parts given, in key order). */
export function partialScopeKey(scope: { connection: string; model?: string; variant?: string }): string {
  const parts = [scope.connection];
  if (scope.model) {
    parts.push(scope.model);
    if (scope.variant) parts.push(scope.variant);
  }
  return `${parts.map(encodeURIComponent).join('|')}|`;
}

/** The scope's parts as fields (written beside keys, for reading a collection by hand). */
export function scopeFields(scope: ScopeParts): ScopeParts {
  return { connection: scope.connection, model: scope.model, variant: scope.variant };
}
