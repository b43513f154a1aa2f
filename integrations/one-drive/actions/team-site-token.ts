import { z } from 'zod';
import { ActionError } from '../../../runtime/errors';
import { defineAction } from '../../../runtime/types';

const Input = z.object({});
const Output = z.object({ access_token: z.string(), expires_at: z.string().nullable() });

/**
 * The SharePoint team-site token for the file picker v8. It exists only on
 * connections authorized with `Sites.Read.All`; without it the app must re-authorize.
 */
export const teamSiteTokenAction = defineAction<z.infer<typeof Input>, z.infer<typeof Output>>({
  kind: 'action',
  name: 'team-site-token',
  description: 'Returns the SharePoint team-site token (file picker v8) of the connection.',
  endpoint: { method: 'GET', path: '/team-site-token' },
  input: Input,
  output: Output,
  // A SharePoint access token: for the app's own file picker, never for an agent.
  agentTool: { exposed: false },
  async exec(ctx) {
    const config = (await ctx.getConnection()).connection_config;
    if (typeof config.teamsiteAccessToken !== 'string') {
      throw new ActionError(
        'teamsite_token_missing',
        'This connection has no team-site token: it was authorized without Sites.Read.All (or before Weft obtained team-site tokens). Re-authorize the connection with Sites.Read.All in the scopes.',
        409,
      );
    }
    return {
      access_token: config.teamsiteAccessToken,
      expires_at: typeof config.teamsiteAccessTokenExpiresAt === 'string' ? config.teamsiteAccessTokenExpiresAt : null,
    };
  },
});
