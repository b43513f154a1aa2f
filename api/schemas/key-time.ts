import { z } from 'zod';

/**
 * An ISO time a time-keyed listing can hold: keys hold times from 1970 to 9999
 * (store/key-range.ts), so anything else is no time of an entry.
 */
export const keyTime = z.iso
  .datetime({ offset: true })
  .transform((v) => new Date(v))
  .refine((d) => d.getTime() >= 0 && d.getTime() <= 253_402_300_799_999, 'a time between 1970 and 9999');

/**
 * `from` not after `to`, both given and parsed. zod runs object refinements even when a
 * field failed its own check (the format check lets parsing go on), so a time that did not
 * parse is still a string here: only times are compared.
 */
export function inOrder(range: { from?: unknown; to?: unknown }, strictly = false): boolean {
  const { from, to } = range;
  if (!(from instanceof Date && to instanceof Date)) return true;
  return strictly ? from.getTime() < to.getTime() : from.getTime() <= to.getTime();
}
