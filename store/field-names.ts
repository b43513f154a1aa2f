/**
 * What a key must be to be stored as a MongoDB field name and to be used in an update path
 * (`metadata.<key>`), on MongoDB 7 and FerretDB 1.24 alike: a dot would address a nested
 * field, a leading `$` an operator, and empty or NUL-bearing names are refused by one
 * server or the other.
 */
export function fieldNameProblem(key: string, maxLength = 255): string | null {
  if (key.length === 0) return 'keys must not be empty';
  if (key.length > maxLength) return `keys must be at most ${maxLength} characters`;
  if (key.startsWith('$')) return `key ${quote(key)} must not start with "$" (MongoDB reads it as an operator)`;
  if (key.includes('.')) return `key ${quote(key)} must not contain "." (MongoDB reads it as a path into a nested object)`;
  if (key.includes('\u0000')) return `key ${quote(key)} must not contain the NUL character`;
  return null;
}

function quote(key: string): string {
  return JSON.stringify(key.length > 80 ? `${key.slice(0, 80)}…` : key);
}
