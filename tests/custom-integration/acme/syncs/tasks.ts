import type { SyncDefinition } from '../../../../runtime/types';
import { AcmeTask, Task } from '../models';

/** Every task of the account; a full sync, so tasks gone upstream are deleted at the end of a run. */
export const tasks: SyncDefinition = {
  kind: 'sync',
  name: 'tasks',
  description: 'Syncs every task of the connected Acme account.',
  endpoint: { method: 'GET', path: '/acme/tasks' },
  models: { Task },
  syncType: 'full',
  frequency: 'every 1h',
  autoStart: false,
  async exec(ctx) {
    for await (const page of ctx.paginate<unknown>({ endpoint: '/v1/tasks' })) {
      const records = page.map((raw) => {
        const t = AcmeTask.parse(raw);
        return { id: t.task_id, title: t.title, done: t.state === 'done', updated_at: t.updated };
      });
      await ctx.batchSave(records, 'Task');
    }
  },
};
