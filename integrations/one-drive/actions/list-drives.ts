import { z } from 'zod';
import { defineAction } from '../../../runtime/types';
import { graphVersion, listDrives } from '../graph';
import { toDrive } from '../mappers';
import { Drive } from '../models';

const Input = z.object({});
const Output = z.object({ drives: z.array(Drive) });

/** The drives the signed-in user can reach (`GET /me/drives`, every page). */
export const listDrivesAction = defineAction<z.infer<typeof Input>, z.infer<typeof Output>>({
  kind: 'action',
  name: 'list-drives',
  description: 'Lists the drives available to the authenticated user.',
  endpoint: { method: 'GET', path: '/list-drives' },
  input: Input,
  output: Output,
  async exec(ctx) {
    const v = await graphVersion(ctx);
    return { drives: (await listDrives(ctx, v)).map(toDrive) };
  },
});
