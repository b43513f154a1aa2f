import type { RouteConfig } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import type { IntegrationRegistry } from '../../runtime/registry';
import type { SyncDefinition } from '../../runtime/types';
import * as unifiedModels from '../../runtime/unified-models';
import { actionHeaders } from '../schemas/actions';
import { connectionHeaders, listRecordsQuery } from '../schemas/records';
import { prunedRecord, recordMetadataField } from '../schemas/responses';
import { errorResponses } from './errors';
import { json } from './content';

/**
 * Each integration's models as named components (`CalendarEvent`, `File`, `UnifiedFile`, ...)
 * and the routes that answer with them:
 *
 * - every sync's own endpoint (`GET /v1/luma/list-events`, ...) answers with exactly its
 *   models' records, so each has its own path with those models;
 * - `GET /records` answers with the records of the model named by `?model=`, which OpenAPI
 *   cannot tie a response to: its records are `anyOf` every model (not `oneOf`: one record can
 *   fit two models, e.g. `File` and `SelectedFile` are the same shape), each listed in the
 *   description, so a reader (and a generated client) finds every model there.
 *
 * A unified model name (`UnifiedFile`) is described by runtime/unified-models.ts; a custom
 * integration's unified name that is not there is a free-form object.
 */
interface IntegrationModels {
  allRecords: z.ZodType[];
  modelNames: string[];
  endpoints: Endpoint[];
}

/** Worked out once per integration registry (which does not change), as both record routes' operations need it. */
const modelsByRegistry = new WeakMap<IntegrationRegistry, IntegrationModels>();

function integrationModels(integrations: IntegrationRegistry): IntegrationModels {
  const known = modelsByRegistry.get(integrations);
  if (known) return known;
  const components = new ComponentNames();
  const allRecords: z.ZodType[] = [];
  const modelNames: string[] = [];
  const endpoints = new Map<string, Endpoint>();

  for (const provider of integrations.providers()) {
    const integration = integrations.get(provider.name)!;
    for (const sync of integration.syncs) {
      const records = syncRecordSchemas(components, provider.name, sync);
      for (const { name, schema } of records) {
        if (!modelNames.includes(name)) {
          modelNames.push(name);
          allRecords.push(schema);
        }
      }
      const page = recordPage(records.map((r) => r.schema));
      addEndpoint(endpoints, {
        kind: 'sync',
        method: 'get',
        path: sync.endpoint.path,
        response: page,
        summary: `${provider.name} sync \`${sync.name}\``,
        description: sync.description,
        input: listRecordsQuery.partial({ model: true }),
      });
    }
    for (const action of integration.actions) {
      const output = components.name(`${provider.name}`, actionComponentName(action.name, 'Output'), action.output);
      // Its query string (GET) or JSON body (POST), when the input is an object.
      const input = action.input instanceof z.ZodObject ? (action.input as z.ZodObject) : undefined;
      addEndpoint(endpoints, {
        kind: 'action',
        method: action.endpoint.method === 'GET' ? 'get' : 'post',
        path: action.endpoint.path,
        response: output,
        summary: `${provider.name} action \`${action.name}\``,
        description: action.description,
        input,
      });
    }
  }
  const models = { allRecords, modelNames, endpoints: [...endpoints.values()] };
  modelsByRegistry.set(integrations, models);
  return models;
}

/** `GET /records`: its description lists every model, its records are any of them. */
export function recordsOperation(operation: RouteConfig, integrations: IntegrationRegistry): RouteConfig {
  const { allRecords, modelNames } = integrationModels(integrations);
  return {
    ...operation,
    description: `The records of the model named by \`model\` (one of: ${modelNames.map((n) => `\`${n}\``).join(', ')}), each with \`_weft_metadata\`.`,
    responses: { 200: json(recordPage(allRecords)), ...operation.responses },
  };
}

/**
 * `GET /v1/*path` and `POST /v1/*path` (`operation`'s method): one operation per endpoint the
 * integrations' syncs and actions declare at that method, answering with their models.
 */
export function operationEndpoints(operation: RouteConfig, integrations: IntegrationRegistry): RouteConfig[] {
  return integrationModels(integrations)
    .endpoints.filter((endpoint) => endpoint.method === operation.method)
    .map((endpoint) => {
      const { path, input } = endpoint;
      return {
        method: endpoint.method,
        path: `/v1${path}`,
        operationId: `${endpoint.method === 'get' ? 'v1' : 'v1Post'}${actionComponentName(path.replace(/\//g, '-'), '')}`,
        summary: endpoint.summaries.join('; '),
        tags: operation.tags,
        description: endpoint.operations.join('\n\n'),
        request: {
          headers: endpoint.hasAction
            ? connectionHeaders.extend(actionHeaders.pick({ 'x-max-retries': true, 'x-action-timeout': true }).shape)
            : connectionHeaders,
          ...(input && endpoint.method === 'get' ? { query: input } : {}),
          // A POST action's input is its JSON body.
          ...(input && endpoint.method === 'post' ? { body: { required: true, content: { 'application/json': { schema: input } } } } : {}),
        },
        responses: {
          200: json(endpoint.responses.length === 1 ? endpoint.responses[0] : z.union(endpoint.responses)),
          ...errorResponses([404, 409, 424, 504], true, endpoint.hasAction),
        },
      };
    });
}

/** `{ records, next_cursor }` with these record shapes. */
function recordPage(records: z.ZodType[]) {
  const record = records.length === 0 ? z.record(z.string(), z.unknown()) : records.length === 1 ? records[0] : z.union(records);
  return z.object({ records: z.array(z.union([record, prunedRecord])), next_cursor: z.string().nullable() });
}

/** A sync's models, each as `Model & { _weft_metadata }`, plus their unified forms. */
function syncRecordSchemas(components: ComponentNames, provider: string, sync: SyncDefinition): Array<{ name: string; schema: z.ZodType }> {
  const out: Array<{ name: string; schema: z.ZodType }> = [];
  for (const [model, schema] of Object.entries(sync.models)) {
    out.push({ name: model, schema: z.intersection(components.name(provider, model, schema as z.ZodType), recordMetadataField) });
    const unified = sync.unified?.[model];
    if (unified) {
      const unifiedSchema = (unifiedModels as Record<string, unknown>)[unified.name];
      const shape = unifiedSchema instanceof z.ZodType ? unifiedSchema : z.record(z.string(), z.unknown());
      out.push({ name: unified.name, schema: z.intersection(components.name('unified', unified.name, shape), recordMetadataField) });
    }
  }
  return out;
}

/** One `/v1/...` route: what the operations declared at it answer with. */
interface Endpoint {
  method: 'get' | 'post';
  path: string;
  responses: z.ZodType[];
  /** The input: query string (GET) or JSON body (POST). */
  input?: z.ZodObject;
  operations: string[];
  summaries: string[];
  /** An action answers with its own errors, at statuses it chooses. */
  hasAction: boolean;
}

function addEndpoint(
  endpoints: Map<string, Endpoint>,
  op: { kind: 'sync' | 'action'; method: 'get' | 'post'; path: string; response: z.ZodType; summary: string; description: string; input?: z.ZodObject },
): void {
  const operation = `${op.summary}: ${op.description}`;
  // Two integrations may share an endpoint: one route, either answer.
  const key = `${op.method} ${op.path}`;
  const existing = endpoints.get(key);
  if (existing) {
    existing.responses.push(op.response);
    existing.operations.push(operation);
    existing.summaries.push(op.summary);
    existing.hasAction ||= op.kind === 'action';
    return;
  }
  endpoints.set(key, {
    method: op.method,
    path: op.path,
    responses: [op.response],
    input: op.input,
    operations: [operation],
    summaries: [op.summary],
    hasAction: op.kind === 'action',
  });
}

function actionComponentName(action: string, suffix: string): string {
  return `${action.replace(/(^|[-_ ])(\w)/g, (_m, _sep: string, c: string) => c.toUpperCase())}${suffix}`;
}

/**
 * Component names for zod schemas (zod's `.meta({ id })`, which the generator turns into
 * `#/components/schemas/<id>`): a model's own name, or `<provider>_<name>` when another
 * integration already has a different model of that name.
 */
class ComponentNames {
  private readonly byName = new Map<string, { original: z.ZodType; named: z.ZodType }>();

  name(provider: string, name: string, schema: z.ZodType): z.ZodType {
    for (const candidate of [name, `${provider}_${name}`]) {
      const taken = this.byName.get(candidate);
      if (taken?.original === schema) return taken.named;
      if (taken) continue;
      const named = schema.meta({ id: candidate });
      this.byName.set(candidate, { original: schema, named });
      return named;
    }
    return schema;
  }
}
