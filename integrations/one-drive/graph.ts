import type { BaseContext } from '../../runtime/types';
import { displayPath, joinPath } from './mappers';
import type { GraphDrive, GraphDriveItem } from './models';

export type GraphVersion = 'v1.0' | 'beta';

/** v1.0 unless the connection asks for beta (`connection_config.graph_api_version`). */
export async function graphVersion(ctx: BaseContext): Promise<GraphVersion> {
  const { connection_config } = await ctx.getConnection();
  return connection_config.graph_api_version === 'beta' ? 'beta' : 'v1.0';
}

/** Every drive of the signed-in user (all pages). */
export async function listDrives(ctx: BaseContext, v: GraphVersion): Promise<GraphDrive[]> {
  const drives: GraphDrive[] = [];
  for await (const page of ctx.paginate<GraphDrive>({ endpoint: `/${v}/me/drives` })) drives.push(...page);
  return drives;
}

/**
 * Folder id → full path of the folder ('' for the drive's root). Delta responses carry
 * no `parentReference.path`, so paths are built from the folders seen; a parent not seen
 * yet (a resumed attempt, a change under an untouched folder) is fetched once by id,
 * where Graph does return its path.
 */
export class FolderPaths {
  constructor(
    private readonly ctx: BaseContext,
    private readonly v: GraphVersion,
    private readonly driveId: string,
    readonly paths: Record<string, string> = {},
  ) {}

  async parentPathOf(item: GraphDriveItem): Promise<string | null> {
    const parentId = item.parentReference?.id;
    if (!parentId) return null;
    const known = this.paths[parentId];
    if (known !== undefined) return known;
    const res = await this.ctx.get<GraphDriveItem>({
      endpoint: `/${this.v}/drives/${encodeURIComponent(this.driveId)}/items/${encodeURIComponent(parentId)}`,
      params: { $select: 'id,name,parentReference,root,folder' },
    });
    const parent = res.data;
    const path = parent.root ? '' : joinPath(displayPath(parent.parentReference?.path) ?? '', parent.name ?? '');
    this.paths[parentId] = path;
    return path;
  }

  /** Records a folder's path; true when it moved or was renamed (its descendants' paths are stale). */
  setFolder(id: string, path: string): boolean {
    const before = this.paths[id];
    this.paths[id] = path;
    return before !== undefined && before !== path;
  }

  forget(id: string): void {
    delete this.paths[id];
  }
}
