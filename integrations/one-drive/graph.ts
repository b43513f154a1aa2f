import { ActionError, isProviderStatus } from '../../runtime/errors';
import type { ActionContext, BaseContext } from '../../runtime/types';
import { displayPath, joinPath, toFile } from './mappers';
import type { File, GraphDrive, GraphDriveItem } from './models';

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

/** Graph's `@microsoft.graph.conflictBehavior`: what a write does when the name is taken. */
export const CONFLICT_BEHAVIORS = ['fail', 'replace', 'rename'] as const;
export type ConflictBehavior = (typeof CONFLICT_BEHAVIORS)[number];

/** Characters OneDrive and SharePoint refuse in a name (and `/`, which would address a path). */
// eslint-disable-next-line no-control-regex
const INVALID_NAME = /["*:<>?/\\|\u0000-\u001f]/;

/** Why OneDrive would refuse `name` as an item name, or null when it is fine. */
export function invalidItemName(name: string): string | null {
  if (INVALID_NAME.test(name)) return 'it contains a character OneDrive does not allow (" * : < > ? / \\ | or a control character)';
  if (name !== name.trim() || name.endsWith('.')) return 'it starts or ends with a space, or ends with a dot';
  if (name === '.' || name === '..') return 'it is . or ..';
  return null;
}

/**
 * Where a write addresses its parent folder: `item` is `/items/{id}` or `/root`, and `path`
 * the percent-encoded folder path below the root when the parent was given by path.
 */
export function parentAddress(v: GraphVersion, driveId: string, parent: { parentId?: string; parentPath?: string }): { item: string; path: string | null } {
  const drive = `/${v}/drives/${encodeURIComponent(driveId)}`;
  if (parent.parentId) return { item: `${drive}/items/${encodeURIComponent(parent.parentId)}`, path: null };
  const segments = (parent.parentPath ?? '').split('/').filter((s) => s !== '');
  if (segments.length === 0) return { item: `${drive}/root`, path: null };
  return { item: `${drive}/root`, path: segments.map(encodeURIComponent).join('/') };
}

/**
 * The item a write created, as the `user-files` sync stores it, saved to the records cache
 * at once (GET /records shows it; the next run finds it unchanged). Its path comes from
 * `parentReference.path`, which a write's answer carries (delta's do not).
 */
export async function saveWrittenItem(ctx: ActionContext, item: GraphDriveItem, driveId: string): Promise<File> {
  const parentPath = displayPath(item.parentReference?.path);
  const file = toFile(item, driveId, parentPath === null ? null : joinPath(parentPath, item.name ?? ''));
  await ctx.batchSave([file], 'File');
  return file;
}

/** Graph's refusals of a write, each with a code of its own (the provider's answer kept in `upstream`). */
export function writeError(err: unknown, what: string): unknown {
  if (!isProviderStatus(err, 403, 404, 409)) return err;
  const upstream = { status: err.providerStatus, body: err.providerBody };
  const graphCode = (err.providerBody as { error?: { code?: unknown } } | null)?.error?.code;
  if (err.providerStatus === 409 && graphCode === 'nameAlreadyExists') {
    return new ActionError('name_already_exists', `${what}: an item of that name already exists in the folder (conflictBehavior "fail").`, 409, { upstream });
  }
  if (err.providerStatus === 404) return new ActionError('parent_not_found', `${what}: the drive or the parent folder does not exist.`, 404, { upstream });
  if (err.providerStatus === 403) {
    return new ActionError('write_access_denied', `${what}: Graph refused the write; the connection needs Files.ReadWrite (or Files.ReadWrite.All).`, 403, {
      upstream,
    });
  }
  return err;
}
