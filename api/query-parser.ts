import qs from 'qs';

/** Most values one query parameter may repeat (e.g. `ids=` of `GET /records`). */
export const MAX_REPEATED_QUERY_VALUES = 1_000;

/**
 * Express's "extended" query parser is qs with its defaults, whose `arrayLimit` of 20 turned
 * a 21st repeated `ids=` into an object (`{0: …, 1: …}`), so asking for more than 20 records
 * by id was refused as a malformed query. The same parser with room for the lists the API
 * takes; past the per-parameter caps in the schemas a request gets a clear 400. Prototype
 * keys (`__proto__=`) stay ignored.
 */
export function parseQueryString(query: string): Record<string, unknown> {
  return qs.parse(query, { arrayLimit: 2 * MAX_REPEATED_QUERY_VALUES, parameterLimit: 2 * MAX_REPEATED_QUERY_VALUES });
}
