/**
 * Records the histories the replay test replays, from real runs on a real Temporal dev server
 * and FerretDB (started here on free loopback ports) through the whole Weft stack:
 *
 *   npx tsx tests/replay/record-histories.ts
 *
 * Run it after a workflow change that is meant to be incompatible (and so fails replay), then
 * commit tests/replay/histories/. Compatible changes keep the old histories: they are the
 * runs still in flight when the new workers start.
 *
 * Every stack runs with the fixed REPLAY_ENCRYPTION_KEY, so the payloads of what it records are
 * encrypted as in production and the replay test decodes them with the same key. The
 * histories recorded before payloads were encrypted stay plaintext (the codec passes them
 * through); `npx tsx tests/replay/record-histories.ts encrypted` records only
 * action-encrypted.json, an action run with encrypted payloads, and `... single-activity` only
 * sync-single-activity.json, a sync run as one activity (the path runs take since it came).
 */
import type { ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { syncWorkflowId } from '../../control';
import { actionWorkflowId } from '../../control';
import { connectOneDrive, createLumaIntegration, createOneDriveIntegration, startWeftStack, type WeftStack } from '../support/weft-stack';
import { spawnWorker } from '../support/worker-process';
import { waitFor } from '../support/wait';
import { startStandaloneTestInfra } from '../support/standalone-infra';
import { startScriptedReceiver } from '../support/scripted-receiver';
import { webhookDeliveryWorkflowId } from '../../webhooks/delivery-contracts';
import { REPLAY_ENCRYPTION_KEY } from './replay-key';

const REPO = path.resolve(__dirname, '../..');
const HISTORIES = path.join(__dirname, 'histories');
/** Over each stack's own configuration: the key the replay test decodes with. */
const REPLAY_ENV = { WEFT_ENCRYPTION_KEY: REPLAY_ENCRYPTION_KEY };

async function save(client: Client, name: string, workflowId: string): Promise<void> {
  const handle = client.workflow.getHandle(workflowId);
  await handle.result().catch(() => undefined);
  const history = await handle.fetchHistory();
  const file = path.join(HISTORIES, `${name}.json`);
  writeFileSync(file, `${JSON.stringify(JSON.parse(historyToJSON(history)), null, 1)}\n`);
  console.log(`${name}: ${history.events?.length ?? 0} events → ${path.relative(REPO, file)}`);
}

const lumaSyncId = (stack: WeftStack, connectionId: string) => syncWorkflowId(stack.temporalIdPrefix, 'dev', 'luma', connectionId, 'list-events', 'base');

async function recordSuccessFailureAndAction(): Promise<void> {
  const stack = await startWeftStack({ luma: { seed: 3, eventCount: 120, maxPageSize: 50 }, graph: { seed: 5, drives: [{ fileCount: 20 }] }, env: REPLAY_ENV });
  try {
    await createLumaIntegration(stack);
    const ok = await stack.api('POST', '/connections', {
      body: { provider_config_key: 'luma', connection_id: 'replay-ok', credentials: { type: 'API_KEY', apiKey: 'sandbox-luma-api-key' } },
    });
    if (ok.status !== 201) throw new Error(`connection: ${ok.status} ${JSON.stringify(ok.body)}`);
    await save(stack.temporal, 'sync-success', lumaSyncId(stack, 'replay-ok'));

    // A fire of the sync's schedule: scheduledSync runs syncRun as a child under the sync's ID.
    const schedules: string[] = [];
    for await (const s of stack.temporal.schedule.list()) if (s.scheduleId.includes('replay-ok')) schedules.push(s.scheduleId);
    if (schedules.length !== 1) throw new Error(`expected one schedule for replay-ok, found ${JSON.stringify(schedules)}`);
    await stack.temporal.schedule.getHandle(schedules[0]!).trigger();
    let scheduled: string | undefined;
    await waitFor(async () => Boolean((scheduled = (await listIds(stack.temporal, 'scheduledSync'))[0])), 30_000, 'the scheduled run to start');
    await save(stack.temporal, 'scheduled-sync', scheduled!);

    // An operation over every connection of the integration (here a pause, which starts no run): syncFanOut.
    const pause = await stack.api('POST', '/sync/pause', { body: { provider_config_key: 'luma', syncs: [] } });
    if (pause.status !== 202) throw new Error(`pause: ${pause.status} ${JSON.stringify(pause.body)}`);
    await save(stack.temporal, 'sync-fan-out', (await listIds(stack.temporal, 'syncFanOut'))[0]!);
    const start = await stack.api('POST', '/sync/start', { body: { provider_config_key: 'luma', connection_id: 'replay-ok', syncs: [] } });
    if (start.status !== 200) throw new Error(`start: ${start.status} ${JSON.stringify(start.body)}`);

    // One record the model refuses: invalid_sync_record, a final error (the next run of the same workflow ID).
    stack.luma.corruptEvent(stack.luma.eventIds()[60]!, { start_at: 'next tuesday' });
    const trigger = await stack.api('POST', '/sync/trigger', { body: { provider_config_key: 'luma', connection_id: 'replay-ok', syncs: ['list-events'] } });
    if (trigger.status !== 200) throw new Error(`trigger: ${trigger.status} ${JSON.stringify(trigger.body)}`);
    await save(stack.temporal, 'sync-failed', lumaSyncId(stack, 'replay-ok'));

    await createOneDriveIntegration(stack);
    const od = await connectOneDrive(stack, 'replay-od');
    if (od.status !== 201) throw new Error(`connection: ${od.status} ${JSON.stringify(od.body)}`);
    const before = new Set((await listIds(stack.temporal, 'actionRun')).map((e) => e));
    const action = await stack.api('POST', '/action/trigger', {
      headers: { 'connection-id': 'replay-od', 'provider-config-key': 'one-drive' },
      body: { action_name: 'list-drives', input: {} },
    });
    if (action.status !== 200) throw new Error(`action: ${action.status} ${JSON.stringify(action.body)}`);
    const actionId = (await listIds(stack.temporal, 'actionRun')).find((id) => !before.has(id));
    if (!actionId) throw new Error('no actionRun workflow found');
    await save(stack.temporal, 'action', actionId);
  } finally {
    await stack.shutdown();
  }
}

/**
 * An async action call (announced by an `async_action` webhook), and a webhook whose first
 * attempt (the dispatcher's) failed, so its workflow made the second after the schedule's wait.
 */
async function recordAsyncActionAndWebhookRetry(): Promise<void> {
  const receiver = await startScriptedReceiver();
  const stack = await startWeftStack({ graph: { seed: 5, drives: [{ fileCount: 3 }] }, egressAllow: { webhooks: [receiver.url] }, env: REPLAY_ENV });
  try {
    const env = await stack.api('PATCH', '/environment', { body: { webhook_url: receiver.url } });
    if (env.status !== 200) throw new Error(`environment: ${env.status} ${JSON.stringify(env.body)}`);
    await createOneDriveIntegration(stack);
    // The connection's `auth` event: refused once, then taken by the workflow's second attempt.
    receiver.answerNext((r) => r.body?.type === 'auth', 503);
    const od = await connectOneDrive(stack, 'replay-async');
    if (od.status !== 201) throw new Error(`connection: ${od.status} ${JSON.stringify(od.body)}`);
    const [authEvent] = (await stack.core.stores.webhookOutbox.list({ environment: 'dev', type: 'auth', limit: 1 })).events;
    if (!authEvent) throw new Error('no auth event stored');
    await waitFor(async () => (await stack.core.stores.webhookOutbox.get(authEvent._id))?.status === 'delivered', 60_000, 'the auth event to be delivered');
    await save(stack.temporal, 'webhook-delivery', webhookDeliveryWorkflowId(stack.temporalIdPrefix, authEvent._id));

    const before = new Set(await listIds(stack.temporal, 'actionRun'));
    const action = await stack.api('POST', '/action/trigger', {
      headers: { 'connection-id': 'replay-async', 'provider-config-key': 'one-drive', 'x-async': 'true' },
      body: { action_name: 'list-drives', input: {} },
    });
    if (action.status !== 202) throw new Error(`action: ${action.status} ${JSON.stringify(action.body)}`);
    let actionId: string | undefined;
    await waitFor(async () => Boolean((actionId = (await listIds(stack.temporal, 'actionRun')).find((id) => !before.has(id)))), 30_000, 'the async action');
    await save(stack.temporal, 'action-async', actionId!);
  } finally {
    await stack.shutdown();
    await receiver.close();
  }
}

/** An action run whose payloads (its input, the activity's result, the workflow's result) are encrypted. */
async function recordEncryptedAction(): Promise<void> {
  const stack = await startWeftStack({ graph: { seed: 5, drives: [{ fileCount: 3 }] }, env: REPLAY_ENV });
  try {
    await createOneDriveIntegration(stack);
    const od = await connectOneDrive(stack, 'replay-encrypted');
    if (od.status !== 201) throw new Error(`connection: ${od.status} ${JSON.stringify(od.body)}`);
    const action = await stack.api('POST', '/action/trigger', {
      headers: { 'connection-id': 'replay-encrypted', 'provider-config-key': 'one-drive', 'x-async': 'true' },
      body: { action_name: 'list-drives', input: {} },
    });
    if (action.status !== 202) throw new Error(`action: ${action.status} ${JSON.stringify(action.body)}`);
    await save(stack.temporal, 'action-encrypted', actionWorkflowId(stack.temporalIdPrefix, 'dev', action.body.id));
  } finally {
    await stack.shutdown();
  }
}

/** A Luma sync run as one activity (performSyncRun, the 'single-activity-run' patch), payloads encrypted. */
async function recordSingleActivitySync(): Promise<void> {
  const stack = await startWeftStack({ luma: { seed: 3, eventCount: 120, maxPageSize: 50 }, env: REPLAY_ENV });
  try {
    await createLumaIntegration(stack);
    const ok = await stack.api('POST', '/connections', {
      body: { provider_config_key: 'luma', connection_id: 'replay-single', credentials: { type: 'API_KEY', apiKey: 'sandbox-luma-api-key' } },
    });
    if (ok.status !== 201) throw new Error(`connection: ${ok.status} ${JSON.stringify(ok.body)}`);
    await save(stack.temporal, 'sync-single-activity', lumaSyncId(stack, 'replay-single'));
  } finally {
    await stack.shutdown();
  }
}

async function listIds(client: Client, workflowType: string): Promise<string[]> {
  const ids: string[] = [];
  for await (const wf of client.workflow.list({ query: `WorkflowType = '${workflowType}'` })) ids.push(wf.workflowId);
  return ids;
}

async function recordRetriedAfterWorkerCrash(): Promise<void> {
  const events = 1_500;
  const stack = await startWeftStack({
    worker: false,
    heartbeatTimeoutMs: 3_000,
    luma: { seed: 11, eventCount: events, maxPageSize: 50, latencyMs: 25 },
    env: REPLAY_ENV,
  });
  const children: ChildProcess[] = [];
  try {
    await createLumaIntegration(stack);
    const first = await spawnWorker(stack);
    children.push(first);
    const created = await stack.api('POST', '/connections', {
      body: { provider_config_key: 'luma', connection_id: 'replay-crash', credentials: { type: 'API_KEY', apiKey: 'sandbox-luma-api-key' } },
    });
    if (created.status !== 201) throw new Error(`connection: ${created.status} ${JSON.stringify(created.body)}`);
    const records = stack.core.stores.db.collection('records');
    await waitFor(async () => (await records.countDocuments({})) >= 300, 60_000, 'the first pages to be saved');
    first.kill('SIGKILL');
    await new Promise((r) => first.once('exit', r));
    children.push(await spawnWorker(stack));
    await save(stack.temporal, 'sync-retried-after-worker-crash', lumaSyncId(stack, 'replay-crash'));
  } finally {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    await stack.shutdown();
  }
}

async function main(): Promise<void> {
  const infra = await startStandaloneTestInfra('replay', (m) =>
    process.stderr.write(`[infra] ${m}
`),
  );
  // `npx tsx tests/replay/record-histories.ts webhooks`: only the async action and webhook histories; `encrypted`: only action-encrypted.
  const only = process.argv[2];
  try {
    if (only === 'encrypted') {
      await recordEncryptedAction();
      return;
    }
    if (only === 'single-activity') {
      await recordSingleActivitySync();
      return;
    }
    if (only !== 'webhooks') {
      await recordSuccessFailureAndAction();
      await recordRetriedAfterWorkerCrash();
    }
    await recordAsyncActionAndWebhookRetry();
    await recordEncryptedAction();
  } finally {
    await infra.stop();
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
