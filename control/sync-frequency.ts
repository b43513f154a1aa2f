import ms, { type StringValue } from 'ms';
import { BadRequestError } from '../common/errors';

/** Below this a sync would mostly hammer its provider; Nango's floor too. */
const MIN_FREQUENCY_MS = 30_000;

/**
 * A sync frequency as Nango writes it ("every 30 minutes", "every 1h", "2h", "1 day") in
 * milliseconds, parsed by `ms` after the optional leading "every". Refused with a stable
 * code: `invalid_frequency` (not a duration), `frequency_too_short` (under 30 s).
 */
export function parseFrequency(text: string): number {
  const duration = text.trim().replace(/^every\s+/i, '');
  const value = duration ? ms(duration as StringValue) : NaN;
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
    throw new BadRequestError('invalid_frequency', `"${text}" is not a frequency; write a duration such as "every 30 minutes", "2h" or "1 day".`);
  }
  if (value < MIN_FREQUENCY_MS) throw new BadRequestError('frequency_too_short', `"${text}" is shorter than the minimum frequency of 30 seconds.`);
  return value;
}

/** How a frequency reads in the status ("every 30m", "every 1h"). */
export function frequencyLabel(everyMs: number): string {
  return `every ${ms(everyMs)}`;
}
