import { IntegrationCodeError, isProviderStatus } from '../../../runtime/errors';
import type { SyncContext, SyncDefinition } from '../../../runtime/types';
import { graphVersion, type GraphVersion } from '../graph';
import { displayPath, joinPath, toFile, toUnifiedFile } from '../mappers';
import { PickedFilesMetadata, SelectedFile, type GraphDriveItem } from '../models';

/**
 * The files the user picked in the file picker, named in the connection's metadata as
 * `{ pickedFiles: [{ driveId, fileIds: [...] }] }`. A picked folder brings everything
 * under it. A full sync: a picked file that vanished is simply not seen, so it is
 * deleted at the end of the run instead of failing the run.
 */
export const selectedFiles: SyncDefinition = {
  kind: 'sync',
  name: 'user-files/selected',
  description: 'Fetches the files the user selected (connection metadata pickedFiles) and syncs the metadata of each; folders are expanded.',
  endpoint: { method: 'GET', path: '/user-files/selected' },
  models: { SelectedFile },
  unified: { SelectedFile: { name: 'UnifiedFile', map: toUnifiedFile } },
  syncType: 'full',
  frequency: 'every 1h',
  autoStart: false,
  async exec(ctx) {
    const parsed = PickedFilesMetadata.safeParse(await ctx.getMetadata());
    if (!parsed.success) {
      throw new IntegrationCodeError('invalid_metadata', 'Connection metadata must be { pickedFiles: [{ driveId, fileIds: [...] }] }.');
    }
    const v = await graphVersion(ctx);
    for (const pick of parsed.data.pickedFiles) {
      for (const itemId of pick.fileIds) {
        const item = await getPickedItem(ctx, v, pick.driveId, itemId);
        if (!item) continue;
        const path = item.root ? '' : joinPath(displayPath(item.parentReference?.path) ?? '', item.name ?? '');
        if (!item.root) await ctx.batchSave([toFile(item, pick.driveId, path)], 'SelectedFile');
        if (item.folder) await saveFolderContents(ctx, v, pick.driveId, item.id, path);
      }
    }
  },
};

async function getPickedItem(ctx: SyncContext, v: GraphVersion, driveId: string, itemId: string): Promise<GraphDriveItem | null> {
  try {
    return (await ctx.get<GraphDriveItem>({ endpoint: `/${v}/drives/${encodeURIComponent(driveId)}/items/${encodeURIComponent(itemId)}` })).data;
  } catch (err) {
    if (!isProviderStatus(err, 404)) throw err;
    ctx.log('a picked file no longer exists; its record will be deleted', { driveId, itemId });
    return null;
  }
}

/** Everything under a picked folder, depth first, one page of children at a time. */
async function saveFolderContents(ctx: SyncContext, v: GraphVersion, driveId: string, folderId: string, folderPath: string): Promise<void> {
  const subfolders: Array<{ id: string; path: string }> = [];
  for await (const page of ctx.paginate<GraphDriveItem>({
    endpoint: `/${v}/drives/${encodeURIComponent(driveId)}/items/${encodeURIComponent(folderId)}/children`,
  })) {
    const files = page.map((child) => toFile(child, driveId, joinPath(folderPath, child.name ?? '')));
    if (files.length) await ctx.batchSave(files, 'SelectedFile');
    for (const child of page) if (child.folder) subfolders.push({ id: child.id, path: joinPath(folderPath, child.name ?? '') });
  }
  for (const sub of subfolders) await saveFolderContents(ctx, v, driveId, sub.id, sub.path);
}
