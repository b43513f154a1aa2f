import { isSecretFieldName } from './names';

/**
 * The values of secret-named fields anywhere in an object (a connection's config, its
 * metadata), as strings: the literal secrets a recorder scrubs from everything else it
 * writes, so one that reappears in a body or a URL is caught there too.
 */
export function secretValuesOf(value: unknown): string[] {
  const found: string[] = [];
  const visit = (v: unknown, secretField: boolean, depth: number): void => {
    if (depth > 64) return;
    if (typeof v === 'string' || typeof v === 'number') {
      if (secretField && String(v) !== '') found.push(String(v));
    } else if (Array.isArray(v)) {
      for (const item of v) visit(item, secretField, depth + 1);
    } else if (v !== null && typeof v === 'object') {
      for (const [k, item] of Object.entries(v as Record<string, unknown>)) visit(item, secretField || isSecretFieldName(k), depth + 1);
    }
  };
  visit(value, false, 0);
  return found;
}
