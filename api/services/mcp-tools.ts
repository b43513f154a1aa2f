import { z } from 'zod';
import { WeftError } from '../../common/errors';
import { outageOf } from '../../common/outage';
import type { ActionDefinition } from '../../runtime/types';
import type { ConnectionDoc } from '../../store/connections';
import type { ApiDeps } from '../deps';
import { actionTimeoutMs, awaitActionResult, startAction, validateActionInput } from './action-control';

/**
 * A connection's actions as MCP tools (docs/mcp.md), in the shapes of MCP's `tools/list` and
 * `tools/call`, transport aside (api/routers/mcp.ts). A call runs the action exactly as
 * `POST /action/trigger` does: the same input check, the same `actionRun` workflow, retries,
 * deadline, request log and telemetry.
 */

/** The connection tag that narrows its tools: action names, comma-separated. */
const MCP_TOOLS_TAG = 'mcp_tools';

export interface McpTool {
  name: string;
  title: string;
  description: string;
  inputSchema: { type: 'object'; [key: string]: unknown };
  outputSchema?: { type: 'object'; [key: string]: unknown };
  annotations: { title: string; readOnlyHint: boolean; destructiveHint: boolean; idempotentHint: boolean; openWorldHint: boolean };
}

export interface McpToolResult {
  content: Array<{ type: 'text'; text: string }>;
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
  [key: string]: unknown;
}

function names(list: string | undefined): Set<string> | null {
  if (list === undefined) return null;
  return new Set(
    list
      .split(',')
      .map((n) => n.trim())
      .filter(Boolean),
  );
}

/**
 * The actions an agent may use on this connection: every action of its integration that is
 * not kept from agents, narrowed by the connection's `mcp_tools` tag (set on it, or by the
 * connect session that made it) and by the request's own allow-list, each only narrowing.
 */
export function exposedActions(deps: ApiDeps, connection: ConnectionDoc, requested?: string): ActionDefinition[] {
  const byTag = names(Object.entries(connection.tags ?? {}).find(([k]) => k.toLowerCase() === MCP_TOOLS_TAG)?.[1]);
  const byRequest = names(requested);
  return (deps.registry.get(connection.provider)?.actions ?? []).filter(
    (a) => a.agentTool?.exposed !== false && (!byTag || byTag.has(a.name)) && (!byRequest || byRequest.has(a.name)),
  );
}

function isWrite(def: ActionDefinition): boolean {
  return (def.agentTool?.effect ?? (def.endpoint.method === 'GET' ? 'read' : 'write')) === 'write';
}

/** A zod model as the JSON Schema of an object (MCP's tools take and give objects); null when it is not one. */
function objectSchema(schema: z.ZodType, io: 'input' | 'output'): { type: 'object'; [key: string]: unknown } | null {
  const { $schema: _dialect, ...json } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as Record<string, unknown>;
  return json.type === 'object' ? (json as { type: 'object' }) : null;
}

function title(name: string): string {
  const words = name.replace(/[-_]+/g, ' ');
  return words.charAt(0).toUpperCase() + words.slice(1);
}

export function toolOf(def: ActionDefinition): McpTool {
  const write = isWrite(def);
  const output = objectSchema(def.output, 'output');
  return {
    name: def.name,
    title: title(def.name),
    description: def.description,
    inputSchema: objectSchema(def.input, 'input') ?? { type: 'object' },
    ...(output ? { outputSchema: output } : {}),
    annotations: { title: title(def.name), readOnlyHint: !write, destructiveHint: write, idempotentHint: !write, openWorldHint: true },
  };
}

/** An error as the agent reads it: a tool result marked as an error, with the code and what to fix. */
function toolError(err: WeftError): McpToolResult {
  const issues = Array.isArray(err.details) ? (err.details as Array<{ path?: string; message?: string }>) : [];
  const lines = [`${err.code}: ${err.message}`, ...issues.map((i) => `- ${i.path ?? '(root)'}: ${i.message ?? ''}`)];
  return {
    isError: true,
    content: [{ type: 'text', text: lines.join('\n') }],
    structuredContent: { error: { code: err.code, message: err.message, ...(err.details === undefined ? {} : { detail: err.details }) } },
  };
}

/** `tools/call`: bad input and failures of the action are tool errors the agent can act on; what Weft itself cannot do throws. */
export async function callTool(deps: ApiDeps, connection: ConnectionDoc, tools: ActionDefinition[], name: string, args: unknown): Promise<McpToolResult> {
  const def = tools.find((t) => t.name === name);
  if (!def)
    return toolError(new WeftError('unknown_tool', `No tool "${name}" on this connection (available: ${tools.map((t) => t.name).join(', ') || 'none'}).`, 404));
  try {
    const input = validateActionInput(def, args);
    const started = await startAction(deps, connection, def, input, 0);
    const output = await awaitActionResult(deps, started, actionTimeoutMs(deps, undefined));
    const structured = typeof output === 'object' && output !== null && !Array.isArray(output) ? (output as Record<string, unknown>) : undefined;
    return { content: [{ type: 'text', text: JSON.stringify(output) }], ...(structured ? { structuredContent: structured } : {}) };
  } catch (err) {
    // The action's own failures (the provider's refusal, a deadline passed) are the agent's to
    // read; Weft's store or Temporal out of reach is an error of the request (503).
    if (err instanceof WeftError && !outageOf(err)) return toolError(err);
    throw err;
  }
}
