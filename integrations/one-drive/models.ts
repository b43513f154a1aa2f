import { z } from 'zod';

const isoDateTime = z.iso.datetime({ offset: true });

/** Metadata of one file or folder of a drive (the `user-files` sync). */
export const File = z.object({
  id: z.string().min(1),
  name: z.string(),
  drive_id: z.string().min(1),
  parent_id: z.string().nullable(),
  /** Full path inside the drive, e.g. `/Documents/report.docx`. */
  path: z.string().nullable(),
  mime_type: z.string().nullable(),
  is_folder: z.boolean(),
  size: z.number().int().nonnegative().nullable(),
  etag: z.string().nullable(),
  ctag: z.string().nullable(),
  web_url: z.url().nullable(),
  created_at: isoDateTime.nullable(),
  updated_at: isoDateTime.nullable(),
  hashes: z
    .object({
      quickXorHash: z.string().optional(),
      sha1Hash: z.string().optional(),
      sha256Hash: z.string().optional(),
      crc32Hash: z.string().optional(),
    })
    .optional(),
});
export type File = z.infer<typeof File>;

/** A file chosen in the file picker (the `user-files/selected` sync): the same fields. */
export const SelectedFile = File;
export type SelectedFile = File;

export const Drive = z.object({
  id: z.string().min(1),
  name: z.string(),
  driveType: z.string(),
  webUrl: z.string().nullable(),
  createdDateTime: isoDateTime.nullable(),
  owner: z.object({ id: z.string().nullable(), displayName: z.string().nullable(), email: z.string().nullable() }).optional(),
});
export type Drive = z.infer<typeof Drive>;

/** The parts of a Graph driveItem the integration reads; the rest passes through. */
export interface GraphDriveItem {
  id: string;
  name?: string;
  size?: number;
  eTag?: string;
  cTag?: string;
  webUrl?: string;
  createdDateTime?: string;
  lastModifiedDateTime?: string;
  parentReference?: { driveId?: string; driveType?: string; id?: string; path?: string };
  file?: { mimeType?: string; hashes?: Record<string, string> };
  folder?: { childCount?: number };
  root?: Record<string, unknown>;
  deleted?: { state?: string };
  '@microsoft.graph.downloadUrl'?: string;
}

export interface GraphDrive {
  id: string;
  name?: string;
  driveType?: string;
  webUrl?: string;
  createdDateTime?: string;
  owner?: { user?: { id?: string; displayName?: string; email?: string }; group?: { id?: string; displayName?: string; email?: string } };
}

/** Connection metadata of `user-files/selected`: what the user picked in the file picker. */
export const PickedFilesMetadata = z.object({
  pickedFiles: z.array(z.object({ driveId: z.string().min(1), fileIds: z.array(z.string().min(1)) })).default([]),
});
