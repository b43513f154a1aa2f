import { z } from 'zod';

/** The connection an MCP client works on, named as the proxy and `GET /records` name it. */
export const mcpHeaders = z.object({
  'connection-id': z.string().min(1).max(255),
  'provider-config-key': z.string().min(1).max(255),
  /** Narrows the connection's tools further for this client: action names, comma-separated. */
  'weft-mcp-tools': z.string().min(1).max(2000).optional(),
});
