import { z } from 'zod';
import { fieldNameProblem } from '../../store/field-names';

/**
 * The one schema for free-form JSON objects an app hands in and Weft stores as they are
 * (connection `metadata`, `connection_config`, `tags`, connect-session defaults).
 *
 * Their keys end up as MongoDB field names, and a merge turns them into update paths
 * (`metadata.<key>`), so a key with a dot would write into a nested object and a `$` key
 * would be an operator. Both MongoDB 7 and FerretDB 1.24 also refuse some documents
 * outright (empty or NUL keys, FerretDB: arrays directly inside arrays, non-finite
 * numbers), which used to surface as a 500 after the provider had already been called.
 * Everything such a server would refuse is refused here, before anything is written or
 * sent, with the path of the offending value. Sizes are capped so one connection cannot
 * carry megabytes of metadata into every listing.
 */
export interface JsonObjectLimits {
  /** Size of the object serialized as JSON, in UTF-8 bytes. */
  maxBytes: number;
  /** Keys counted at every depth. */
  maxKeys: number;
  /** Nesting of objects and arrays below the object itself. */
  maxDepth: number;
  /** Length of one key, in characters. */
  maxKeyLength: number;
}

const FREE_FORM_OBJECT_LIMITS: JsonObjectLimits = { maxBytes: 64 * 1024, maxKeys: 1_000, maxDepth: 32, maxKeyLength: 255 };
const TAG_LIMITS = { maxTags: 64, maxKeyLength: 64, maxValueLength: 255 } as const;

/** At most this many problems are reported for one object: enough to fix it, small to send. */
const MAX_REPORTED_ISSUES = 20;

type Path = (string | number)[];
interface Issue {
  path: Path;
  message: string;
}

/**
 * Walks the value without recursion (a hostile body can nest deeper than the call stack)
 * and lists what a MongoDB or FerretDB server would refuse, plus the size rules.
 */
function jsonObjectIssues(value: Record<string, unknown>, limits: JsonObjectLimits = FREE_FORM_OBJECT_LIMITS): Issue[] {
  const issues: Issue[] = [];
  let keys = 0;
  const stack: { value: unknown; path: Path; depth: number; inArray: boolean }[] = [{ value, path: [], depth: 0, inArray: false }];
  while (stack.length && issues.length < MAX_REPORTED_ISSUES) {
    const item = stack.pop()!;
    const v = item.value;
    if (typeof v === 'number' && !Number.isFinite(v)) {
      issues.push({ path: item.path, message: 'numbers must be finite' });
    } else if (Array.isArray(v)) {
      if (item.inArray) {
        issues.push({
          path: item.path,
          message: 'arrays must not be directly inside arrays (FerretDB refuses nested arrays); wrap the inner array in an object',
        });
        continue;
      }
      if (tooDeep(item, limits, issues)) continue;
      for (let i = v.length - 1; i >= 0; i--) stack.push({ value: v[i], path: [...item.path, i], depth: item.depth + 1, inArray: true });
    } else if (v !== null && typeof v === 'object') {
      if (tooDeep(item, limits, issues)) continue;
      const entries = Object.entries(v);
      keys += entries.length;
      if (keys > limits.maxKeys) {
        issues.push({ path: [], message: `at most ${limits.maxKeys} keys in all (counted at every depth)` });
        break;
      }
      for (let i = entries.length - 1; i >= 0; i--) {
        const [key, child] = entries[i];
        const problem = fieldNameProblem(key, limits.maxKeyLength);
        if (problem) issues.push({ path: [...item.path, key], message: problem });
        else stack.push({ value: child, path: [...item.path, key], depth: item.depth + 1, inArray: false });
      }
    }
  }
  // Serialized only once the nesting is known to be bounded (JSON.stringify recurses).
  if (issues.length === 0) {
    const bytes = Buffer.byteLength(JSON.stringify(value));
    if (bytes > limits.maxBytes) issues.push({ path: [], message: `at most ${limits.maxBytes} bytes as JSON (got ${bytes})` });
  }
  return issues.slice(0, MAX_REPORTED_ISSUES);
}

function tooDeep(item: { path: Path; depth: number }, limits: JsonObjectLimits, issues: Issue[]): boolean {
  if (item.depth < limits.maxDepth) return false;
  issues.push({ path: item.path, message: `nested more than ${limits.maxDepth} levels deep` });
  return true;
}

/** A free-form JSON object that MongoDB and FerretDB both store as given (see above). */
export function jsonObject(limits: JsonObjectLimits = FREE_FORM_OBJECT_LIMITS) {
  return z.record(z.string(), z.unknown()).superRefine((value, ctx) => {
    for (const issue of jsonObjectIssues(value, limits)) ctx.addIssue({ code: 'custom', path: issue.path, message: issue.message });
  });
}

/** `tags`: a flat string → string map, with the same key rules and a small count. */
export const tagsObject = z.record(z.string(), z.string().max(TAG_LIMITS.maxValueLength)).superRefine((tags, ctx) => {
  const keys = Object.keys(tags);
  if (keys.length > TAG_LIMITS.maxTags) return void ctx.addIssue({ code: 'custom', path: [], message: `at most ${TAG_LIMITS.maxTags} tags` });
  const problems = keys.map((key) => [key, fieldNameProblem(key, TAG_LIMITS.maxKeyLength)] as const).filter(([, problem]) => problem);
  for (const [key, problem] of problems.slice(0, MAX_REPORTED_ISSUES)) ctx.addIssue({ code: 'custom', path: [key], message: problem! });
});
