import { randomBytes } from 'node:crypto';
import type { WorkflowHandle } from '@temporalio/client';
import { syncWorkflowId } from '../control';
import { createLumaIntegration, startWeftStack, type WeftStack } from '../tests/support/weft-stack';
import type { Figure } from './figure';
import { now, percentile } from './timing';
import { spawnWorkerProcess } from './worker-process';

const RUNS = 50;
/** Between two GET /sync/status of one wait: tight enough not to hide the run's own time. */
const POLL_MS = 10;
/** Runs before the measured ones: the worker's first workflow and activity tasks (isolate, caches, connections). */
const WARM_UP_RUNS = 3;

/**
 * POST /sync/trigger -> GET /sync/status reading SUCCESS for this run, for a one-page Luma
 * sync, as an app sees it; the worker in a process of its own, as deployed. Each run's
 * workflow history then says where the time went (from the trigger to the run's start, the
 * activities, their queueing, the last status poll).
 */
export async function triggerLatency(): Promise<Figure[]> {
  const stack = await startWeftStack({ worker: false, luma: { seed: 5, eventCount: 5 }, temporalCallTimeoutMs: 10_000 });
  const worker = await spawnWorkerProcess(stack);
  try {
    await createLumaIntegration(stack);
    const connectionId = `trigger-${randomBytes(4).toString('hex')}`;
    const created = await stack.api('POST', '/connections', {
      body: { provider_config_key: 'luma', connection_id: connectionId, credentials: { type: 'API_KEY', apiKey: 'sandbox-luma-api-key' } },
    });
    if (created.status !== 201) throw new Error(`POST /connections: ${created.status} ${JSON.stringify(created.body)}`);
    await stack.waitForSync(connectionId, 'list-events');

    const totals: number[] = [];
    const phases: Phases[] = [];
    for (let i = 0; i < WARM_UP_RUNS + RUNS; i++) {
      const run = await triggerAndWait(stack, connectionId);
      if (i < WARM_UP_RUNS) continue;
      totals.push(run.ms);
      phases.push(await phasesOf(stack, connectionId, run));
    }
    const median = (pick: (p: Phases) => number) => percentile(phases.map(pick), 50);
    return [
      {
        figure: 'trigger_to_success',
        runs: RUNS,
        sync: 'luma list-events, one page',
        status_poll_ms: POLL_MS,
        p50_ms: percentile(totals, 50),
        p99_ms: percentile(totals, 99),
        max_ms: percentile(totals, 100),
        target: 'p50 <= 250',
        pass: percentile(totals, 50) <= 250,
        // Medians of each step, from the run's workflow history (server clock; same machine).
        median_phases_ms: {
          trigger_request: median((p) => p.triggerRequest),
          trigger_to_run_started: median((p) => p.toStarted),
          workflow_task_queueing: median((p) => p.workflowTaskQueueing),
          workflow_task_processing: median((p) => p.workflowTaskProcessing),
          activity_queueing: median((p) => p.activityQueueing),
          activities_running: median((p) => p.activitiesRunning),
          run_closed_to_status_success: median((p) => p.closedToSeen),
        },
        worker_tasks_per_run: phases[0]?.counts,
      },
    ];
  } finally {
    await worker.stop();
    await stack.shutdown();
  }
}

interface TimedRun {
  ms: number;
  /** Wall-clock (epoch ms) at the trigger request, its answer, and the status read saying SUCCESS. */
  sentAt: number;
  answeredAt: number;
  seenAt: number;
}

async function triggerAndWait(stack: WeftStack, connectionId: string): Promise<TimedRun> {
  const sentAt = Date.now();
  const t = now();
  const res = await stack.api('POST', '/sync/trigger', { body: { provider_config_key: 'luma', connection_id: connectionId, syncs: ['list-events'] } });
  if (res.status !== 200) throw new Error(`POST /sync/trigger: ${res.status} ${JSON.stringify(res.body)}`);
  const answeredAt = Date.now();
  for (;;) {
    const status = await stack.api('GET', `/sync/status?provider_config_key=luma&syncs=list-events&connection_id=${connectionId}`);
    if (status.status !== 200) throw new Error(`GET /sync/status: ${status.status} ${JSON.stringify(status.body)}`);
    const [s] = status.body.syncs;
    // SUCCESS of this run, not of the one before: finishedAt is the worker's clock, the same machine's.
    if (s.status === 'SUCCESS' && Date.parse(s.finishedAt) >= sentAt) return { ms: now() - t, sentAt, answeredAt, seenAt: Date.now() };
    if (s.status === 'ERROR') throw new Error(`the sync failed: ${JSON.stringify(s.latestError)}`);
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}

type HistoryEvent = NonNullable<Awaited<ReturnType<WorkflowHandle['fetchHistory']>>['events']>[number];

interface Phases {
  triggerRequest: number;
  toStarted: number;
  /** Time from a workflow task being scheduled to a worker picking it up, summed over the run. */
  workflowTaskQueueing: number;
  /** Time from a worker picking a workflow task up to its completion, summed. */
  workflowTaskProcessing: number;
  /** Time from an activity being scheduled to a worker starting it, summed. */
  activityQueueing: number;
  activitiesRunning: number;
  closedToSeen: number;
  counts: { workflow_tasks: number; activities: number };
}

async function phasesOf(stack: WeftStack, connectionId: string, run: TimedRun): Promise<Phases> {
  const id = syncWorkflowId(stack.temporalIdPrefix, 'dev', 'luma', connectionId, 'list-events', 'base');
  const history = await stack.temporal.workflow.getHandle(id).fetchHistory();
  const events = history.events ?? [];
  const at = (e: HistoryEvent) => Number(e.eventTime?.seconds ?? 0) * 1000 + Math.floor((e.eventTime?.nanos ?? 0) / 1e6);
  const byId = new Map(events.map((e) => [Number(e.eventId), e]));
  const type = (e: HistoryEvent) => String(temporalEventType(e.eventType)).replace('EVENT_TYPE_', '');
  let workflowTaskQueueing = 0;
  let workflowTaskProcessing = 0;
  let activityQueueing = 0;
  let activitiesRunning = 0;
  const counts = { workflow_tasks: 0, activities: 0 };
  for (const e of events) {
    if (type(e) === 'WORKFLOW_TASK_STARTED') {
      const scheduled = byId.get(Number(e.workflowTaskStartedEventAttributes?.scheduledEventId));
      if (scheduled) workflowTaskQueueing += at(e) - at(scheduled);
    }
    if (type(e) === 'WORKFLOW_TASK_COMPLETED') {
      const started = byId.get(Number(e.workflowTaskCompletedEventAttributes?.startedEventId));
      if (started) workflowTaskProcessing += at(e) - at(started);
      counts.workflow_tasks++;
    }
    if (type(e) === 'ACTIVITY_TASK_STARTED') {
      const scheduled = byId.get(Number(e.activityTaskStartedEventAttributes?.scheduledEventId));
      if (scheduled) activityQueueing += at(e) - at(scheduled);
    }
    if (type(e) === 'ACTIVITY_TASK_COMPLETED') {
      const started = byId.get(Number(e.activityTaskCompletedEventAttributes?.startedEventId));
      if (started) activitiesRunning += at(e) - at(started);
      counts.activities++;
    }
  }
  const first = events[0];
  const last = events[events.length - 1];
  return {
    triggerRequest: run.answeredAt - run.sentAt,
    toStarted: first ? at(first) - run.sentAt : NaN,
    workflowTaskQueueing,
    workflowTaskProcessing,
    activityQueueing,
    activitiesRunning,
    closedToSeen: last ? run.seenAt - at(last) : NaN,
    counts,
  };
}

/** History event types arrive as enum numbers or names depending on how the history was decoded. */
function temporalEventType(t: unknown): string {
  if (typeof t === 'string') return t;
  return EVENT_TYPE_NAMES[Number(t)] ?? String(t);
}

// temporal.api.enums.v1.EventType numbers of the events read above.
const EVENT_TYPE_NAMES: Record<number, string> = {
  1: 'EVENT_TYPE_WORKFLOW_EXECUTION_STARTED',
  2: 'EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED',
  5: 'EVENT_TYPE_WORKFLOW_TASK_SCHEDULED',
  6: 'EVENT_TYPE_WORKFLOW_TASK_STARTED',
  7: 'EVENT_TYPE_WORKFLOW_TASK_COMPLETED',
  10: 'EVENT_TYPE_ACTIVITY_TASK_SCHEDULED',
  11: 'EVENT_TYPE_ACTIVITY_TASK_STARTED',
  12: 'EVENT_TYPE_ACTIVITY_TASK_COMPLETED',
};
