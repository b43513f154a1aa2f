import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { syncWorkflowId } from '../../control';
import { resolveBinary } from '../../scripts/infra/binaries';
import { infraOptionsFromEnv } from '../../scripts/infra/infra-env';
import { createLumaIntegration, startWeftStack, type WeftStack } from '../support/weft-stack';
import { readAllRecordsTyped } from '../support/weft-client';

const API_KEY = 'sandbox-luma-api-key';
const EVENTS = 40;

/**
 * What README "Operating Weft" tells an operator: a run that failed for a cause outside Weft
 * is reset with the Temporal CLI once the cause is fixed; the run then completes and
 * GET /sync/status follows it.
 */
describe('an operator resets a failed sync run with `temporal workflow reset`', () => {
  let stack: WeftStack;

  beforeAll(async () => {
    stack = await startWeftStack({ luma: { seed: 11, eventCount: EVENTS }, temporalCallTimeoutMs: 10_000 });
    await createLumaIntegration(stack);
  });
  afterAll(async () => stack?.shutdown());

  async function status() {
    const res = await stack.client.GET('/sync/status', {
      params: { query: { provider_config_key: 'luma', syncs: 'list-events', connection_id: 'reset-user' } },
    });
    expect(res.response.status).toBe(200);
    return res.data!.syncs[0];
  }

  test('the failed run, reset to its first workflow task after the cause is fixed, completes; the status reads SUCCESS', async () => {
    const created = await stack.client.POST('/connections', {
      body: { provider_config_key: 'luma', connection_id: 'reset-user', credentials: { type: 'API_KEY', apiKey: API_KEY } },
    });
    expect(created.response.status).toBe(201);
    await stack.waitForSync('reset-user', 'list-events');

    // Luma refuses the key for a while: the next run fails, final (no retry helps).
    stack.luma.deleteEvents(3);
    stack.luma.failNext(1_000, 401);
    await stack.client.POST('/sync/trigger', { body: { provider_config_key: 'luma', connection_id: 'reset-user', syncs: ['list-events'] } });
    await expect(stack.waitForSync('reset-user', 'list-events')).rejects.toThrow();
    expect(await status()).toMatchObject({ status: 'ERROR', latestError: { code: 'provider_auth_failed' } });

    // The cause is fixed; the operator resets the failed run with the CLI.
    stack.luma.failNext(0);
    const temporal = await resolveBinary('temporal', { cacheDir: infraOptionsFromEnv().binaries.cacheDir });
    const workflowId = syncWorkflowId(stack.temporalIdPrefix, 'dev', 'luma', 'reset-user', 'list-events', 'base');
    await promisify(execFile)(temporal, [
      'workflow',
      'reset',
      '--address',
      stack.env.TEMPORAL_ADDRESS,
      '--namespace',
      stack.env.TEMPORAL_NAMESPACE,
      '--workflow-id',
      workflowId,
      '--type',
      'FirstWorkflowTask',
      '--reason',
      'the provider accepts the key again',
    ]);

    const summary: any = await stack.waitForSync('reset-user', 'list-events');
    expect(summary.result.CalendarEvent).toEqual({ added: 0, updated: 0, deleted: 3 });
    expect(await status()).toMatchObject({ status: 'SUCCESS', recordCount: { CalendarEvent: EVENTS - 3 } });
    expect(await readAllRecordsTyped(stack.client, { model: 'CalendarEvent', connectionId: 'reset-user', filter: 'deleted' })).toHaveLength(3);
  });
});
