import { IntegrationCodeError, isProviderStatus } from '../../../runtime/errors';
import type { SyncContext, SyncDefinition } from '../../../runtime/types';
import { FolderPaths, graphVersion, listDrives, type GraphVersion } from '../graph';
import { joinPath, toFile, toUnifiedFile } from '../mappers';
import { File, type GraphDrive, type GraphDriveItem } from '../models';

/** Per drive: where the next delta starts, and the folder paths known at that point. */
interface DriveCursor {
  deltaLink: string;
  folders: Record<string, string>;
}

interface UserFilesCheckpoint {
  version: 1;
  drives: Record<string, DriveCursor>;
}

/** Graph lost our delta token (410 `resyncRequired`): only a full enumeration recovers. */
class ResyncRequired extends Error {}

/**
 * Metadata of every file and folder in the user's drives, kept current with Graph's
 * delta API. The first run (and a run after `reset`) enumerates each drive and saves the
 * delta link of its last page; later runs follow those links, so only changes travel:
 * edits are saved, items with the `deleted` facet are deleted.
 *
 * A full enumeration happens instead of deltas when Graph answers 410 (the token
 * expired), when the set of drives changed, or when a folder moved or was renamed (the
 * paths of everything under it changed, and delta reports only the folder). It declares
 * `trackDeletes`, so records it does not see again are deleted when the run completes.
 */
export const userFiles: SyncDefinition = {
  kind: 'sync',
  name: 'user-files',
  description: "Fetches all files of the user's drives and syncs the metadata of each (delta: later runs fetch only changes).",
  endpoint: { method: 'GET', path: '/user-files' },
  models: { File },
  unified: { File: { name: 'UnifiedFile', map: toUnifiedFile } },
  syncType: 'incremental',
  frequency: 'every 1h',
  autoStart: true,
  // A change in a drive (Graph sends no item data: the delta query fetches it), or changes Graph could not send.
  webhookSubscriptions: ['change', 'missed'],
  async exec(ctx) {
    const v = await graphVersion(ctx);
    const saved = await ctx.getCheckpoint<UserFilesCheckpoint>();
    const drives = await listDrives(ctx, v);
    const next: UserFilesCheckpoint = { version: 1, drives: {} };

    let full = !saved || saved.version !== 1 || !sameDrives(drives, saved.drives);
    if (!full && saved) {
      try {
        for (const drive of drives) {
          const walked = await walkDrive(ctx, v, drive, saved.drives[drive.id]);
          next.drives[drive.id] = walked.cursor;
          if (walked.foldersMoved) full = true;
        }
      } catch (err) {
        if (!(err instanceof ResyncRequired)) throw err;
        ctx.log('Graph asked for a resync (delta token expired); enumerating every drive again');
        full = true;
      }
    }
    if (full) {
      ctx.trackDeletes('File');
      for (const drive of drives) next.drives[drive.id] = (await walkDrive(ctx, v, drive, null)).cursor;
    }
    await ctx.saveCheckpoint(next);
  },
};

function sameDrives(drives: GraphDrive[], saved: Record<string, DriveCursor>): boolean {
  const ids = new Set(drives.map((d) => d.id));
  return ids.size === Object.keys(saved).length && [...ids].every((id) => saved[id] !== undefined);
}

const DELTA_PAGE_SIZE = 1000;

/** Follows one drive's delta (or enumerates it, without a cursor) to its delta link. */
async function walkDrive(
  ctx: SyncContext,
  v: GraphVersion,
  drive: GraphDrive,
  cursor: DriveCursor | null,
): Promise<{ cursor: DriveCursor; foldersMoved: boolean }> {
  const folders = new FolderPaths(ctx, v, drive.id, { ...(cursor?.folders ?? {}) });
  let foldersMoved = false;
  // Delta takes `$top`: big pages mean fewer round trips and bigger
  // batches to write. Graph clamps an oversized value; the links it returns keep the query.
  const listing = ctx.paginate<GraphDriveItem>(
    // A delta is always read to its end: fetch each next page while this one is saved.
    cursor
      ? { endpoint: cursor.deltaLink, prefetch: true }
      : { endpoint: `/${v}/drives/${encodeURIComponent(drive.id)}/root/delta`, params: { $top: DELTA_PAGE_SIZE }, prefetch: true },
  );
  try {
    for await (const page of listing) {
      const saves = [];
      const deletes = [];
      for (const item of page) {
        if (item.deleted) {
          deletes.push({ id: item.id });
          folders.forget(item.id);
          continue;
        }
        if (item.root) {
          folders.setFolder(item.id, '');
          continue;
        }
        const parentPath = await folders.parentPathOf(item);
        const path = parentPath === null ? null : joinPath(parentPath, item.name ?? '');
        if (item.folder && path !== null && folders.setFolder(item.id, path)) foldersMoved = true;
        saves.push(toFile(item, drive.id, path));
      }
      if (saves.length) await ctx.batchSave(saves, 'File');
      if (deletes.length) await ctx.batchDelete(deletes, 'File');
    }
  } catch (err) {
    if (cursor && isProviderStatus(err, 410)) throw new ResyncRequired();
    throw err;
  }
  const deltaLink = listing.end?.['@odata.deltaLink'];
  if (typeof deltaLink !== 'string')
    throw new IntegrationCodeError('delta_link_missing', `Graph ended the delta of drive ${drive.id} without an @odata.deltaLink.`);
  return { cursor: { deltaLink, folders: folders.paths }, foldersMoved };
}
