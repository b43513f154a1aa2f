import { z } from 'zod';
import { CONFLICT_BEHAVIORS, invalidItemName } from '../graph';

/** The name of a new file or folder, checked as OneDrive checks it, so a bad one changes nothing. */
export const ItemName = z
  .string()
  .min(1)
  .max(255)
  .superRefine((name, ctx) => {
    const problem = invalidItemName(name);
    if (problem) ctx.addIssue({ code: 'custom', message: `Not a valid OneDrive name: ${problem}.` });
  });

/** Where the new item goes: the parent folder by id or by path (neither: the drive's root). */
export const ParentFields = {
  driveId: z.string().min(1),
  /** The parent folder's item id. */
  parentId: z.string().min(1).optional(),
  /** The parent folder's path below the root, e.g. `/Documents/Reports`. */
  parentPath: z
    .string()
    .min(1)
    .superRefine((path, ctx) => {
      for (const segment of path.split('/').filter((s) => s !== '')) {
        const problem = invalidItemName(segment);
        if (problem) ctx.addIssue({ code: 'custom', message: `Folder "${segment}" of the path is not a valid OneDrive name: ${problem}.` });
      }
    })
    .optional(),
  /** What Graph does when the name is taken: `fail` (default, answered 409 name_already_exists), `replace` or `rename`. */
  conflictBehavior: z.enum(CONFLICT_BEHAVIORS).default('fail'),
};

export const oneParent = {
  check: (input: { parentId?: string; parentPath?: string }) => !(input.parentId && input.parentPath),
  message: { message: 'Give parentId or parentPath, not both.', path: ['parentPath'] },
};
