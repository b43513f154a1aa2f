/**
 * The `_id` of a document found by a composite key: each part percent-encoded, joined by
 * "|". Injective (no encoded part contains "|"), so two keys never share an `_id`, and every
 * key with the same leading parts shares a prefix, so "all keys under (a, b)" is an `_id`
 * range. Ill-formed UTF-16 (a lone surrogate from a JSON `\ud800` escape) is first made
 * well-formed, as the BSON encoder would store it anyway; `encodeURIComponent` would throw.
 */
export function keyId(...parts: string[]): string {
  return parts.map((p) => encodeURIComponent(wellFormed(p))).join('|');
}

/** The `_id` range of every key that starts with these parts: `{ $gte, $lt }`. */
export function keyPrefixRange(...parts: string[]): { $gte: string; $lt: string } {
  const prefix = `${keyId(...parts)}|`;
  // "}" is the character after "|": the first string past every continuation of the prefix.
  return { $gte: prefix, $lt: `${prefix.slice(0, -1)}}` };
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

function wellFormed(s: string): string {
  return s.replace(LONE_SURROGATE, '\uFFFD');
}
