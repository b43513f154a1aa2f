import { existsSync, readFileSync } from 'node:fs';
import type { Client } from '@temporalio/client';

const LOG_TAIL_CHARS = 4_000;

/**
 * What a test says when a workflow does not finish in time: the workflow's status and pending
 * activities, who polls its task queue (and whether a backlog waits there), and the dev
 * server's last warnings. A CI run once saw a sync's first activity stay SCHEDULED for
 * minutes with nothing else to go on.
 */
export async function describeStall(client: Client, workflowId: string): Promise<string> {
  const parts: string[] = [];
  let taskQueue: string | undefined;
  try {
    const d = await client.workflow.getHandle(workflowId).describe();
    taskQueue = d.taskQueue;
    const pending = (d.raw.pendingActivities ?? []).map((a) => ({
      type: a.activityType?.name,
      state: a.state,
      attempt: a.attempt,
      lastFailure: a.lastFailure?.message,
      lastHeartbeat: a.lastHeartbeatTime?.seconds?.toString(),
    }));
    parts.push(`status ${d.status.name}, pending activities ${JSON.stringify(pending)}`);
  } catch (err) {
    parts.push(`describe failed: ${(err as Error).message}`);
  }
  if (taskQueue) parts.push(await describeTaskQueue(client, taskQueue));
  const log = process.env.WEFT_TEST_TEMPORAL_LOG;
  if (log && existsSync(log)) {
    const text = readFileSync(log, 'utf8');
    parts.push(`temporal dev server output (last ${LOG_TAIL_CHARS} chars):\n${text.slice(-LOG_TAIL_CHARS) || '(none)'}`);
  }
  return parts.join('\n');
}

async function describeTaskQueue(client: Client, name: string): Promise<string> {
  // TaskQueueType values of the Temporal API (1 = workflow, 2 = activity).
  const types = { workflow: 1, activity: 2 };
  const lines: string[] = [];
  for (const [label, taskQueueType] of Object.entries(types)) {
    try {
      const res = await client.workflowService.describeTaskQueue({
        namespace: client.options.namespace,
        taskQueue: { name },
        taskQueueType,
        reportStats: true,
      });
      const pollers = (res.pollers ?? []).map((p) => `${p.identity} last ${p.lastAccessTime?.seconds?.toString()}`);
      const stats = res.stats
        ? `backlog ${res.stats.approximateBacklogCount?.toString()}, age ${res.stats.approximateBacklogAge?.seconds?.toString() ?? 0} s`
        : 'no stats';
      lines.push(`${label} queue ${name}: ${pollers.length} pollers [${pollers.join('; ')}], ${stats}`);
    } catch (err) {
      lines.push(`${label} queue ${name}: describe failed: ${(err as Error).message}`);
    }
  }
  return lines.join('\n');
}
