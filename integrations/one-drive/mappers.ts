import type { UnifiedFile } from '../../runtime/unified-models';
import type { Drive, File, GraphDrive, GraphDriveItem } from './models';

const orNull = <T>(v: T | undefined): T | null => (v === undefined ? null : v);

/** A driveItem → the `File` model; `path` is computed by the caller (delta omits it). */
export function toFile(item: GraphDriveItem, driveId: string, path: string | null): File {
  const hashes = item.file?.hashes;
  return {
    id: item.id,
    name: item.name ?? '',
    drive_id: item.parentReference?.driveId ?? driveId,
    parent_id: orNull(item.parentReference?.id),
    path,
    mime_type: orNull(item.file?.mimeType),
    is_folder: item.folder !== undefined,
    size: orNull(item.size),
    etag: orNull(item.eTag),
    ctag: orNull(item.cTag),
    web_url: orNull(item.webUrl),
    created_at: orNull(item.createdDateTime),
    updated_at: orNull(item.lastModifiedDateTime),
    ...(hashes ? { hashes: pickHashes(hashes) } : {}),
  };
}

function pickHashes(h: Record<string, string>): NonNullable<File['hashes']> {
  const out: NonNullable<File['hashes']> = {};
  for (const key of ['quickXorHash', 'sha1Hash', 'sha256Hash', 'crc32Hash'] as const) if (typeof h[key] === 'string') out[key] = h[key];
  return out;
}

export function toDrive(drive: GraphDrive): Drive {
  const owner = drive.owner?.user ?? drive.owner?.group;
  return {
    id: drive.id,
    name: drive.name ?? '',
    driveType: drive.driveType ?? 'unknown',
    webUrl: orNull(drive.webUrl),
    createdDateTime: orNull(drive.createdDateTime),
    ...(owner ? { owner: { id: orNull(owner.id), displayName: orNull(owner.displayName), email: orNull(owner.email) } } : {}),
  };
}

/**
 * `parentReference.path` (`/drive/root:/Documents` or `/drives/{id}/root:/Documents`) →
 * the display path `/Documents`; everything up to the first `:` is addressing.
 */
export function displayPath(parentReferencePath: string | undefined): string | null {
  if (!parentReferencePath) return null;
  const i = parentReferencePath.indexOf(':');
  if (i < 0) return null;
  return decodeURIComponent(parentReferencePath.slice(i + 1));
}

export function joinPath(parent: string, name: string): string {
  return `${parent}/${name}`;
}

export function toUnifiedFile(record: Record<string, unknown>): UnifiedFile {
  const f = record as unknown as File;
  return {
    id: f.id,
    name: f.name,
    path: f.path,
    container_id: f.drive_id,
    parent_id: f.parent_id,
    is_folder: f.is_folder,
    mime_type: f.mime_type,
    size: f.size,
    web_url: f.web_url,
    created_at: f.created_at,
    updated_at: f.updated_at,
  };
}
