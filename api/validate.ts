import type { z } from 'zod';
import { BadRequestError } from '../common/errors';
import { toValidationIssues } from '../runtime/validation';

type InputKind = 'invalid_body' | 'invalid_query_params' | 'invalid_headers' | 'invalid_path_params';

/** Parses request input with its zod schema; failures become 400 with the issue list. */
export function parseInput<S extends z.ZodType>(schema: S, value: unknown, code: InputKind): z.infer<S> {
  const parsed = schema.safeParse(value ?? {});
  if (!parsed.success) {
    const where = { invalid_body: 'body', invalid_query_params: 'query parameters', invalid_headers: 'headers', invalid_path_params: 'path' }[code];
    throw new BadRequestError(code, `Invalid request ${where}.`, toValidationIssues(parsed.error));
  }
  return parsed.data;
}
