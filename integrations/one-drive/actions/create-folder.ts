import { z } from 'zod';
import { defineAction } from '../../../runtime/types';
import { graphVersion, parentAddress, saveWrittenItem, writeError } from '../graph';
import { File, type GraphDriveItem } from '../models';
import { ItemName, oneParent, ParentFields } from './write-input';

const Input = z.object({ ...ParentFields, name: ItemName }).refine(oneParent.check, oneParent.message);
type Input = z.infer<typeof Input>;

/**
 * Creates a folder (`POST …/children` with the folder facet). The new
 * folder is saved to the `File` records at once, as the `user-files` sync would store it.
 */
export const createFolderAction = defineAction<Input, File>({
  kind: 'action',
  name: 'create-folder',
  description: 'Creates a folder in a folder of a drive.',
  endpoint: { method: 'POST', path: '/create-folder' },
  input: Input,
  output: File,
  async exec(ctx, input) {
    const v = await graphVersion(ctx);
    const parent = parentAddress(v, input.driveId, input);
    let item: GraphDriveItem;
    try {
      const res = await ctx.post<GraphDriveItem>({
        endpoint: parent.path === null ? `${parent.item}/children` : `${parent.item}:/${parent.path}:/children`,
        data: { name: input.name, folder: {}, '@microsoft.graph.conflictBehavior': input.conflictBehavior },
      });
      item = res.data;
    } catch (err) {
      throw writeError(err, `Creating folder ${input.name}`);
    }
    return saveWrittenItem(ctx, item, input.driveId);
  },
});
