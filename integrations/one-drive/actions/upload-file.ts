import { z } from 'zod';
import type { ActionContext } from '../../../runtime/types';
import { defineAction } from '../../../runtime/types';
import { graphVersion, parentAddress, saveWrittenItem, writeError, type ConflictBehavior } from '../graph';
import { File, type GraphDriveItem } from '../models';
import { ItemName, oneParent, ParentFields } from './write-input';

/**
 * The largest file the action takes. Its bytes travel base64 in the JSON input, through the
 * API (2 MB bodies) and as the action's Temporal payload (2 MB by default), so 1 MiB
 * (≈ 1.4 MB as base64) is what fits both with room to spare.
 */
const MAX_UPLOAD_BYTES = 1024 * 1024;

/**
 * Above this size the file goes through an upload session, in fragments of this size (Graph
 * wants multiples of 320 KiB). Graph takes far larger files in one PUT; Weft sends anything
 * beyond one fragment the way Graph asks large files to be sent, so raising the input bound
 * later (content by reference) changes nothing here.
 */
const FRAGMENT_BYTES = 327_680;

const Input = z
  .object({
    ...ParentFields,
    fileName: ItemName,
    /** The file's bytes, base64-encoded: at most 1 MiB once decoded. */
    content: z.base64().refine((b64) => Buffer.byteLength(b64, 'base64') <= MAX_UPLOAD_BYTES, {
      message: `The file is larger than ${MAX_UPLOAD_BYTES} bytes (1 MiB), the most upload-file takes.`,
    }),
  })
  .refine(oneParent.check, oneParent.message);
type Input = z.infer<typeof Input>;

/**
 * Uploads a file to a OneDrive / SharePoint folder: one `PUT …:/content`
 * for a small file, an upload session for a larger one. The created (or replaced) item is
 * saved to the `File` records at once, as the `user-files` sync would store it.
 */
export const uploadFileAction = defineAction<Input, File>({
  kind: 'action',
  name: 'upload-file',
  description: 'Uploads a file (base64 content, at most 1 MiB) to a folder of a drive; larger than 320 KiB through an upload session.',
  endpoint: { method: 'POST', path: '/upload-file' },
  input: Input,
  output: File,
  async exec(ctx, input) {
    const v = await graphVersion(ctx);
    const bytes = Buffer.from(input.content, 'base64');
    const parent = parentAddress(v, input.driveId, input);
    const target = `${parent.item}:/${[parent.path, encodeURIComponent(input.fileName)].filter((s) => s !== null).join('/')}:`;
    let item: GraphDriveItem;
    try {
      item =
        bytes.length <= FRAGMENT_BYTES
          ? await simpleUpload(ctx, target, bytes, input.conflictBehavior)
          : await sessionUpload(ctx, target, bytes, input.conflictBehavior);
    } catch (err) {
      throw writeError(err, `Uploading ${input.fileName}`);
    }
    return saveWrittenItem(ctx, item, input.driveId);
  },
});

async function simpleUpload(ctx: ActionContext, target: string, bytes: Buffer, conflict: ConflictBehavior): Promise<GraphDriveItem> {
  const res = await ctx.put<GraphDriveItem>({
    endpoint: `${target}/content`,
    params: { '@microsoft.graph.conflictBehavior': conflict },
    headers: { 'content-type': 'application/octet-stream' },
    data: bytes,
  });
  return res.data;
}

/**
 * createUploadSession, then the bytes in fragments to its pre-authenticated URL (sent without
 * the bearer token): 202 with `nextExpectedRanges` between them, the item with the last. A
 * session that fails half-way is cancelled, so nothing half-written stays open.
 */
async function sessionUpload(ctx: ActionContext, target: string, bytes: Buffer, conflict: ConflictBehavior): Promise<GraphDriveItem> {
  const session = await ctx.post<{ uploadUrl: string }>({
    endpoint: `${target}/createUploadSession`,
    data: { item: { '@microsoft.graph.conflictBehavior': conflict } },
  });
  const uploadUrl = session.data.uploadUrl;
  try {
    for (let start = 0; ; start += FRAGMENT_BYTES) {
      const end = Math.min(start + FRAGMENT_BYTES, bytes.length) - 1;
      const res = await ctx.put<GraphDriveItem>({
        endpoint: uploadUrl,
        preAuthenticated: true,
        headers: { 'content-type': 'application/octet-stream', 'content-range': `bytes ${start}-${end}/${bytes.length}` },
        data: bytes.subarray(start, end + 1),
      });
      if (end === bytes.length - 1) return res.data;
    }
  } catch (err) {
    await ctx.delete({ endpoint: uploadUrl, preAuthenticated: true }).catch(() => undefined);
    throw err;
  }
}
