import type { ResponseConfig } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import { errorResponse } from '../schemas/responses';

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'Bad input (`invalid_body`, `invalid_query_params`, `invalid_headers`, ... with the invalid fields in `errors`), or a request that does not apply.',
  401: 'No secret key, or one no environment has (`unauthorized`).',
  404: 'Unknown integration, connection, run, event or route.',
  403: 'Not allowed in this connect session (`integration_not_allowed`).',
  409: 'A conflict: it exists already, or is busy (a sync running, a webhook event being delivered).',
  429: 'Over the environment’s API rate limit, or (requests without a valid key) the client address’s (`rate_limited`); or a provider call had to wait longer than the API waits for the provider account’s shared request budget (`provider_budget_busy` when checking new credentials, `rate_limited` from the proxy). `Retry-After` says when to try again.',
  500: 'A failure inside Weft, or (actions) the action’s own error.',
  424: 'The provider refused (`provider_http_error`, `provider_auth_failed`, `credentials_verification_failed`) or could not be reached (`provider_unreachable`); `upstream` carries its answer where there was one.',
  503: 'MongoDB or Temporal is unavailable; `Retry-After` says when to try again.',
  504: 'The action did not finish within its timeout (`action_timeout`); it keeps running.',
};

/** The one error body, a named component (`#/components/schemas/Error`) so every error response refers to it. */
export const errorBody = errorResponse.meta({ id: 'Error' });

/** Statuses every secret-key route may answer with: the key check, the rate limit, an outage, a failure. */
const KEYED_ROUTE_ERRORS = [400, 401, 429, 500, 503];

/**
 * `{ error: { code, message, ... } }` responses for these statuses (api/middleware/errors.ts);
 * `anyStatus` adds `default` for routes whose code picks its own (an action's errors).
 */
export function errorResponses(statuses: number[], keyed = true, anyStatus = false): Record<string, ResponseConfig> {
  // Unkeyed routes are limited per client address (api/middleware/client-rate-limit.ts): 429 too.
  const all = [...new Set([...(keyed ? KEYED_ROUTE_ERRORS : [400, 429, 500, 503]), ...statuses])].sort();
  const byStatus: Record<string, ResponseConfig> = Object.fromEntries(
    all.map((status) => [
      String(status),
      {
        description: ERROR_DESCRIPTIONS[status] ?? 'Error.',
        ...(status === 429 || status === 503 ? { headers: z.object({ 'retry-after': z.string().describe('Seconds to wait.') }) } : {}),
        content: { 'application/json': { schema: errorBody } },
      },
    ]),
  );
  if (anyStatus)
    byStatus.default = { description: 'The action’s own error, with the status it chose.', content: { 'application/json': { schema: errorBody } } };
  return byStatus;
}
