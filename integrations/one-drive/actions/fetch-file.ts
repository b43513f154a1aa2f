import { z } from 'zod';
import { ActionError, isProviderStatus } from '../../../runtime/errors';
import { defineAction } from '../../../runtime/types';
import { graphVersion } from '../graph';
import type { GraphDriveItem } from '../models';

const Input = z.object({ driveId: z.string().min(1), itemId: z.string().min(1) });
const Output = z.object({ id: z.string(), download_url: z.url() });

/**
 * The latest download URL of a file. Graph's `@microsoft.graph.downloadUrl` is
 * pre-authenticated and short-lived (about an hour), so it is fetched fresh on every call
 * and never stored in records.
 */
export const fetchFileAction = defineAction<z.infer<typeof Input>, z.infer<typeof Output>>({
  kind: 'action',
  name: 'fetch-file',
  description: 'Returns the latest download_url of a file, usable to download its content.',
  endpoint: { method: 'GET', path: '/fetch-file' },
  input: Input,
  output: Output,
  async exec(ctx, input) {
    const v = await graphVersion(ctx);
    let item: GraphDriveItem;
    try {
      item = (
        await ctx.get<GraphDriveItem>({
          endpoint: `/${v}/drives/${encodeURIComponent(input.driveId)}/items/${encodeURIComponent(input.itemId)}`,
          params: { $select: 'id,name,file,folder,@microsoft.graph.downloadUrl' },
        })
      ).data;
    } catch (err) {
      if (isProviderStatus(err, 404))
        throw new ActionError('file_not_found', `Item ${input.itemId} does not exist in drive ${input.driveId} (deleted, or not visible to this user).`, 404);
      throw err;
    }
    if (item.folder) throw new ActionError('not_a_file', `Item ${input.itemId} is a folder; only files have a download URL.`, 400);
    const url = item['@microsoft.graph.downloadUrl'];
    if (!url) throw new ActionError('download_url_unavailable', `Graph returned no download URL for item ${input.itemId}.`, 424);
    return { id: item.id, download_url: url };
  },
});
