import type { ChildProcess } from 'node:child_process';
import { queueAuthWebhook } from '../../webhooks/auth-webhook';
import { webhookDeliveryWorkflowId } from '../../webhooks/delivery-contracts';
import { startScriptedReceiver, stackOutboxDeps, verifies, type ScriptedReceiver } from '../support/scripted-receiver';
import { startWeftStack, type WeftStack } from '../support/weft-stack';
import { spawnWorker } from '../support/worker-process';
import { waitFor } from '../support/wait';

/** Events whose first attempt failed and were waiting for their next when the worker died. */
const WAITING = 10;
/** Events queued while no worker ran at all. */
const QUEUED_WHILE_DOWN = 10;

/**
 * The only worker killed (SIGKILL, its own process) with webhook events pending: some between
 * attempts (the receiver was down), some not tried yet. Their workflows and the outbox keep
 * them; a new worker delivers every one, exactly once per webhook-id.
 */
describe('webhook events survive the worker', () => {
  let stack: WeftStack;
  let app: ScriptedReceiver;
  let secret: string;
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    app = await startScriptedReceiver();
    stack = await startWeftStack({ worker: false, egressAllow: { webhooks: [app.url] }, temporalCallTimeoutMs: 10_000 });
    expect((await stack.api('PATCH', '/environment', { body: { webhook_url: `${app.url}/hooks` } })).status).toBe(200);
    secret = (await stack.api('POST', '/environment/webhook-signing-key/rotate')).body.data.webhook_signing_key;
  });
  afterAll(async () => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    await stack?.shutdown();
    await app?.close();
  });

  const queue = async (connectionId: string): Promise<string> => {
    const queued = await queueAuthWebhook(stackOutboxDeps(stack), {
      environment: 'dev',
      connection: { connection_id: connectionId, provider_config_key: 'luma', provider: 'luma', auth_mode: 'API_KEY' },
      operation: 'creation',
      success: true,
    });
    return queued.id!;
  };
  const outbox = () => stack.core.stores.db.collection('webhook_outbox');

  test('the worker killed with events pending: all delivered, once each, after a new worker starts', async () => {
    const doomed = await spawnWorker(stack);
    children.push(doomed);
    app.setDefaultStatus(503);
    const waiting = await Promise.all(Array.from({ length: WAITING }, (_, i) => queue(`waiting-${i}`)));
    // Every first attempt (the dispatcher's) fails, and each event's workflow, started then,
    // waits on its timer for the next (~5 s). (Killed with an attempt still running, that
    // attempt would end by its 1-minute timeout instead.)
    const waitingOnTimer = async (id: string) => {
      const handle = stack.temporal.workflow.getHandle(webhookDeliveryWorkflowId(stack.temporalIdPrefix, id));
      const history = await handle.fetchHistory().catch(() => null); // not started yet
      return (history?.events ?? []).some((e) => e.timerStartedEventAttributes);
    };
    await waitFor(async () => (await Promise.all(waiting.map(waitingOnTimer))).every(Boolean), 30_000, 'the first attempts to fail');
    expect(await outbox().countDocuments({ _id: { $in: waiting as never[] }, rounds: 1 })).toBe(WAITING);
    doomed.kill('SIGKILL');
    await new Promise((r) => doomed.once('exit', r));
    expect(doomed.signalCode).toBe('SIGKILL');

    // With no worker at all: stored, nothing sent.
    const queuedWhileDown = await Promise.all(Array.from({ length: QUEUED_WHILE_DOWN }, (_, i) => queue(`while-down-${i}`)));
    app.setDefaultStatus(200);
    expect(queuedWhileDown.flatMap((id) => app.withId(id))).toHaveLength(0);

    await stack.startWorker();
    const all = [...waiting, ...queuedWhileDown];
    await waitFor(
      async () => (await outbox().countDocuments({ _id: { $in: all as never[] }, status: 'delivered' })) === all.length,
      60_000,
      'every event delivered',
    );

    for (const id of all) {
      const tries = app.withId(id);
      // Exactly one 2xx per webhook-id; the waiting ones were refused once before.
      expect(tries.filter((t) => t.status === 200)).toHaveLength(1);
      expect(tries.map((t) => t.status)).toEqual(waiting.includes(id) ? [503, 200] : [200]);
      expect(verifies(secret, tries[tries.length - 1])).toBe(true);
      const attempts = await stack.core.stores.webhookDeliveries.listForEvent('dev', id);
      expect(attempts.map((a) => [a.attempt, a.status])).toEqual(
        waiting.includes(id)
          ? [
              [1, 503],
              [2, 200],
            ]
          : [[1, 200]],
      );
    }
    expect(new Set(app.received.filter((t) => t.status === 200).map((t) => t.headers['webhook-id'])).size).toBe(all.length);
  });
});
