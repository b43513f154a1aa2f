import { createWeftClient, listRecords, type RecordModel, type WeftApiClient, type WeftRecord } from '../../cli/api-client/client';
import type { ObservedResponse } from './openapi-responses';

/**
 * The typed client of cli/api-client/ (the `weft` CLI's), for a test stack: every answer it
 * receives is shown to `observe` (the stack checks it against the OpenAPI document, as it
 * does `stack.api`'s), so tests on the typed client keep the document honest too.
 */
export function observedWeftClient(baseUrl: string, secretKey: string, observe: ((r: ObservedResponse) => void) | null): WeftApiClient {
  const client = createWeftClient({ baseUrl, secretKey });
  if (observe) {
    client.use({
      async onResponse({ request, response }) {
        const text = await response.clone().text();
        const contentType = response.headers.get('content-type');
        const url = new URL(request.url);
        observe({
          method: request.method,
          path: `${url.pathname}${url.search}`,
          status: response.status,
          contentType,
          body: text && contentType?.includes('json') ? JSON.parse(text) : text || null,
          headers: Object.fromEntries(response.headers),
        });
        return undefined;
      },
    });
  }
  return client;
}

/** Every record of a model of a connection, following next_cursor, typed as that model. */
export async function readAllRecordsTyped<M extends RecordModel>(
  client: WeftApiClient,
  opts: { model: M; connectionId: string; providerConfigKey?: string; filter?: string; modifiedAfter?: string },
): Promise<WeftRecord<M>[]> {
  const out: WeftRecord<M>[] = [];
  let cursor: string | undefined;
  do {
    const page = await listRecords(client, { providerConfigKey: 'luma', limit: 1000, ...opts, cursor });
    out.push(...page.records);
    cursor = page.next_cursor ?? undefined;
  } while (cursor);
  return out;
}
