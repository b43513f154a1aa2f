import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import {
  CallToolRequestSchema,
  JSONRPCMessageSchema,
  ListResourcesRequestSchema,
  ListToolsRequestSchema,
  ReadResourceRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { BadRequestError, NotFoundError, WeftError } from '../../common/errors';
import { findConnection } from '../../store/connection-lookup';
import { mcpEnabled } from '../../store/environments';
import { environmentOf } from '../middleware/auth';
import { route, routeGroup } from '../routing/route';
import { mcpHeaders } from '../schemas/mcp';
import { listResources, readResource } from '../services/mcp-resources';
import { callTool, exposedActions, toolOf } from '../services/mcp-tools';

const NOT_SERVED = 'MCP’s Streamable HTTP transport (JSON-RPC 2.0 messages), described in docs/mcp.md rather than here.';

/**
 * `/mcp`: one connection's actions as tools for AI agents, and its synced records as
 * resources, over MCP's Streamable HTTP transport (the official SDK's server), stateless:
 * every POST carries its own JSON-RPC message(s) and is answered with JSON. The secret key names the environment, the
 * `Connection-Id` and `Provider-Config-Key` headers the connection; an environment with MCP
 * off answers 404 `mcp_disabled`. There is no server-initiated stream: GET and DELETE answer
 * 405, as the transport's specification allows.
 */
export const mcpRoutes = routeGroup({
  mount: '/mcp',
  access: 'secret-key',
  tag: 'MCP',
  routes: [
    route({
      method: 'post',
      path: '/mcp',
      auth: 'secret-key',
      undocumented: NOT_SERVED,
      request: { headers: mcpHeaders },
      async handler({ deps, req, res, input }) {
        const headers = input.headers();
        const environment = environmentOf(res);
        const env = await deps.stores.environments.get(environment);
        if (!env || !mcpEnabled(env))
          throw new NotFoundError('mcp_disabled', `MCP is off in environment "${environment}": turn it on with PATCH /environment {"mcp_enabled": true}.`);
        // The transport's own refusals are JSON-RPC errors without a code of Weft's: the envelope is checked first.
        const accept = req.header('accept') ?? '';
        if (!accept.includes('application/json') || !accept.includes('text/event-stream'))
          throw new WeftError('not_acceptable', 'An MCP client accepts both application/json and text/event-stream (the Streamable HTTP transport).', 406);
        const messages: unknown[] = Array.isArray(req.body) ? req.body : [req.body];
        if (messages.length === 0 || messages.some((m) => !JSONRPCMessageSchema.safeParse(m).success))
          throw new BadRequestError('invalid_mcp_message', 'The body is not a JSON-RPC 2.0 message (or a list of them).');

        const { connection } = await findConnection(deps.stores, environment, headers['provider-config-key'], headers['connection-id']);
        const tools = exposedActions(deps, connection, headers['weft-mcp-tools']);
        const server = new Server(
          { name: 'weft', version: '1' },
          {
            capabilities: { tools: {}, resources: {} },
            instructions: `Tools act on the ${connection.provider_config_key} account of connection ${connection.connection_id}; resources are its synced records.`,
          },
        );
        server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: tools.map(toolOf) }));
        server.setRequestHandler(CallToolRequestSchema, async (request) =>
          callTool(deps, connection, tools, request.params.name, request.params.arguments ?? {}),
        );
        server.setRequestHandler(ListResourcesRequestSchema, async () => ({ resources: listResources(deps, connection) }));
        server.setRequestHandler(ReadResourceRequestSchema, async (request) => readResource(deps, connection, request.params.uri));
        const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
        res.on('close', () => {
          void transport.close();
          void server.close();
        });
        await server.connect(transport);
        await transport.handleRequest(req, res, req.body);
      },
    }),

    ...(['get', 'delete'] as const).map((method) =>
      route({
        method,
        path: '/mcp',
        auth: 'secret-key',
        undocumented: NOT_SERVED,
        handler({ res }) {
          res.set('Allow', 'POST');
          throw new WeftError('method_not_allowed', 'This MCP server is stateless: it opens no stream and keeps no session. POST each message.', 405);
        },
      }),
    ),
  ],
});
