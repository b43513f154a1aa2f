import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { WeftError } from '../../common/errors';
import type { ConnectionDoc } from '../../store/connections';
import type { ApiDeps } from '../deps';
import { listRecordsQuery } from '../schemas/records';
import { parseInput } from '../validate';
import { listRecordsPage, recordModels } from './record-listing';

/**
 * A connection's synced records as MCP resources (docs/mcp.md): one per model,
 * `weft://<integration>/<model>`, read a page at a time (`?cursor=…&limit=…`) as
 * `GET /records` reads them.
 */

/** MCP's code for a resource that does not exist. */
const RESOURCE_NOT_FOUND = -32002;
const PAGE_LIMIT = 100;
const URI = /^weft:\/\/([^/?#]+)\/([^/?#]+)(?:\?([^#]*))?$/;

export interface McpResource {
  uri: string;
  name: string;
  title: string;
  description: string;
  mimeType: 'application/json';
}

function uriOf(connection: ConnectionDoc, model: string, query?: Record<string, string>): string {
  const base = `weft://${encodeURIComponent(connection.provider_config_key)}/${encodeURIComponent(model)}`;
  return query ? `${base}?${new URLSearchParams(query)}` : base;
}

export function listResources(deps: ApiDeps, connection: ConnectionDoc): McpResource[] {
  return recordModels(deps.registry, connection.provider).map(({ model, unified }) => ({
    uri: uriOf(connection, model),
    name: model,
    title: unified ? `${model} (unified)` : model,
    description: `The ${model} records synced for this connection, ${PAGE_LIMIT} a page; read the \`next_uri\` of a page for the next.`,
    mimeType: 'application/json',
  }));
}

/** One page of a model's records, with the URI of the next page (null at the end). */
export async function readResource(deps: ApiDeps, connection: ConnectionDoc, uri: string) {
  const match = URI.exec(uri);
  const model = match ? decodeURIComponent(match[2]) : undefined;
  if (
    !match ||
    decodeURIComponent(match[1]) !== connection.provider_config_key ||
    !recordModels(deps.registry, connection.provider).some((m) => m.model === model)
  )
    throw new McpError(RESOURCE_NOT_FOUND, `No resource ${uri} on this connection: list them with resources/list.`);
  const params = Object.fromEntries(new URLSearchParams(match[3] ?? ''));
  try {
    const query = parseInput(listRecordsQuery, { model, limit: String(PAGE_LIMIT), ...params, variant: params.variant ?? 'base' }, 'invalid_query_params');
    const page = await listRecordsPage(deps.stores, deps.registry, connection, query);
    const nextUri = page.next_cursor ? uriOf(connection, model as string, { ...params, cursor: page.next_cursor }) : null;
    return {
      contents: [
        { uri, mimeType: 'application/json' as const, text: JSON.stringify({ records: page.records, next_cursor: page.next_cursor, next_uri: nextUri }) },
      ],
    };
  } catch (err) {
    // A cursor or a limit that cannot be read is the client's to fix.
    if (err instanceof WeftError && err.status === 400) throw new McpError(ErrorCode.InvalidParams, `${err.code}: ${err.message}`, err.details);
    throw err;
  }
}
