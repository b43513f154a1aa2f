import createClient, { type Client } from 'openapi-fetch';
import type { ActionOperations, components, paths, RecordModels } from './weft-api';

export type WeftApiClient = Client<paths>;

/** A model `GET /records` reads (a WEFT_INTEGRATIONS_DIR integration's models are read too; they are just not typed here). */
export type RecordModel = keyof RecordModels;

type RecordPage = paths['/records']['get']['responses'][200]['content']['application/json'];
type RecordMetadata = RecordPage['records'][number]['_weft_metadata'];

/**
 * A record as `GET /records?model=<M>` returns it: the model's fields and Weft's metadata; or,
 * once `PATCH /records/prune` dropped its payload, only its `id` (the other fields undefined).
 */
export type WeftRecord<M extends keyof RecordModels> =
  | (RecordModels[M] & { _weft_metadata: RecordMetadata })
  | ({ [K in Exclude<keyof RecordModels[M], 'id'>]?: undefined } & { id: string; _weft_metadata: RecordMetadata & { pruned_at: string } });

/** A typed client of a Weft API (types generated from its OpenAPI document, calls by `openapi-fetch`). */
export function createWeftClient(opts: { baseUrl: string; secretKey: string; fetch?: typeof fetch }): WeftApiClient {
  return createClient<paths>({ baseUrl: opts.baseUrl, headers: { authorization: `Bearer ${opts.secretKey}` }, fetch: opts.fetch });
}

/** One page of `GET /records?model=<M>`. */
export interface RecordsPage<M extends keyof RecordModels> {
  records: WeftRecord<M>[];
  next_cursor: string | null;
}

/**
 * One page of a connection's records of model `M`, typed as that model: the document's
 * `GET /records` answers with any model's records (OpenAPI cannot tie the answer to
 * `?model=`); the model's name here does.
 */
export async function listRecords<M extends keyof RecordModels>(
  client: WeftApiClient,
  opts: {
    model: M;
    connectionId: string;
    providerConfigKey: string;
    cursor?: string;
    limit?: number;
    modifiedAfter?: string;
    /** `added`, `updated`, `deleted`, comma-separated. */
    filter?: string;
    ids?: string[];
    variant?: string;
  },
): Promise<RecordsPage<M>> {
  const { data, error, response } = await client.GET('/records', {
    params: {
      header: { 'connection-id': opts.connectionId, 'provider-config-key': opts.providerConfigKey },
      query: {
        model: opts.model,
        cursor: opts.cursor,
        limit: opts.limit,
        modified_after: opts.modifiedAfter,
        filter: opts.filter,
        ids: opts.ids,
        variant: opts.variant,
      },
    },
  });
  if (!data) throw new Error(`GET /records answered ${response.status}: ${JSON.stringify(error)}`);
  // The server read the records of `opts.model` (checked against the document by the tests).
  return data as unknown as RecordsPage<M>;
}

/** An action of the pre-built integrations, by name. */
export type ActionName = keyof ActionOperations;

/** An action's input: its endpoint's JSON body (POST), or its query (GET; none: `{}` or nothing). */
export type ActionInput<A extends ActionName> = ActionOperations[A] extends { requestBody: { content: { 'application/json': infer Body } } }
  ? Body
  : ActionOperations[A]['parameters'] extends { query?: infer Query }
    ? [NonNullable<Query>] extends [never]
      ? Record<string, never> | undefined
      : NonNullable<Query>
    : undefined;

/** An action's output, as its endpoint answers 200. */
export type ActionOutput<A extends ActionName> = ActionOperations[A]['responses'][200]['content']['application/json'];

/**
 * `POST /action/trigger` (sync mode) for action `A`, its input and output typed as its own
 * endpoint's: the document's `/action/trigger` takes and answers any action's (OpenAPI cannot
 * tie them to `action_name`); the action's name here does, as `listRecords` does for models.
 */
export async function triggerAction<A extends ActionName>(
  client: WeftApiClient,
  opts: { action: A; input: ActionInput<A>; connectionId: string; providerConfigKey: string },
): Promise<{ data?: ActionOutput<A>; error?: components['schemas']['Error']; response: Response }> {
  const { data, error, response } = await client.POST('/action/trigger', {
    params: { header: { 'connection-id': opts.connectionId, 'provider-config-key': opts.providerConfigKey } },
    body: { action_name: opts.action, input: opts.input },
  });
  // The server ran action `opts.action`, whose output its own endpoint documents (the tests check answers against the document).
  return { data: data as ActionOutput<A> | undefined, error, response };
}

/** What `POST /action/trigger` with `X-Async: true` answers (202): the run's id and where to read its output. */
export type ActionStarted = paths['/action/trigger']['post']['responses'][202]['content']['application/json'];

/** `POST /action/trigger` with `X-Async: true` for action `A`, its input typed as the action's: 202 and the run's id. */
export async function startAction<A extends ActionName>(
  client: WeftApiClient,
  opts: { action: A; input: ActionInput<A>; connectionId: string; providerConfigKey: string },
): Promise<{ data?: ActionStarted; error?: components['schemas']['Error']; response: Response }> {
  const { data, error, response } = await client.POST('/action/trigger', {
    params: { header: { 'connection-id': opts.connectionId, 'provider-config-key': opts.providerConfigKey, 'x-async': 'true' } },
    body: { action_name: opts.action, input: opts.input },
  });
  return { data: response.status === 202 ? (data as ActionStarted) : undefined, error, response };
}

/** `GET /action/{id}`: the output of an async run of action `A` once it ended (404 `action_pending` before), typed as the action's. */
export async function actionResult<A extends ActionName>(
  client: WeftApiClient,
  opts: { action: A; id: string },
): Promise<{ data?: ActionOutput<A>; error?: components['schemas']['Error']; response: Response }> {
  const { data, error, response } = await client.GET('/action/{id}', { params: { path: { id: opts.id } } });
  // The run is one of `opts.action` (the caller started it): its output is that action's.
  return { data: data as ActionOutput<A> | undefined, error, response };
}
