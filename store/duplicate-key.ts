/** E11000: the insert or update hit a unique key (on MongoDB and FerretDB alike). */
export function isDuplicateKey(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: number }).code === 11000;
}
