import type { z } from 'zod';
import type { ValidationIssue } from '../common/errors';
import { InvalidRecordError } from './errors';

export function toValidationIssues(error: z.ZodError): ValidationIssue[] {
  return error.issues.map((i) => ({ path: i.path.map(String).join('.') || '(root)', message: i.message, code: i.code }));
}

/** Validates every record with its model's schema; the first invalid one stops the run. */
export function validateRecords<T>(model: string, schema: z.ZodType<T>, records: unknown[]): T[] {
  return records.map((record) => {
    const parsed = schema.safeParse(record);
    if (!parsed.success) throw new InvalidRecordError({ validation: toValidationIssues(parsed.error), model }, record);
    return parsed.data;
  });
}
