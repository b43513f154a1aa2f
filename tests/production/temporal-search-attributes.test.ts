import { randomBytes } from 'node:crypto';
import { Connection } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time';
import { temporal } from '@temporalio/proto';
import { createLumaIntegration, startWeftStack, testInfra, type WeftStack } from '../support/weft-stack';
import { waitFor } from '../support/wait';

const WEFT_ATTRIBUTES = ['WeftEnvironment', 'WeftIntegration', 'WeftConnectionId', 'WeftSyncName', 'WeftOperation'];

/**
 * A namespace made as an operator makes one on a cluster of their own has none of Weft's
 * search attributes; Weft's start adds them (the server allows it), so the first sync runs
 * and can be found by them.
 */
describe('search attributes on a fresh namespace', () => {
  const namespace = `weft-sa-${randomBytes(3).toString('hex')}`;
  let connection: Connection;
  let stack: WeftStack;

  beforeAll(async () => {
    connection = await Connection.connect({ address: testInfra().temporalAddress });
    await connection.workflowService.registerNamespace({ namespace, workflowExecutionRetentionPeriod: msToTs('1 day') });
    // A namespace is served once the frontend's namespace cache has it.
    await waitFor(
      () =>
        connection.workflowService.describeNamespace({ namespace }).then(
          () => true,
          () => false,
        ),
      30_000,
      `namespace ${namespace} to be served`,
    );
  }, 60_000);
  afterAll(async () => {
    await stack?.shutdown();
    await connection?.close();
  });

  const customAttributes = async () => (await connection.operatorService.listSearchAttributes({ namespace })).customAttributes ?? {};

  test('none of them before Weft starts; all five, as Keyword, after', async () => {
    const before = await customAttributes();
    for (const name of WEFT_ATTRIBUTES) expect(before[name]).toBeUndefined();

    stack = await startWeftStack({ luma: { seed: 4, eventCount: 10 }, env: { TEMPORAL_NAMESPACE: namespace } });
    const after = await customAttributes();
    for (const name of WEFT_ATTRIBUTES) expect(after[name]).toBe(temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD);
  }, 90_000);

  test('a sync runs in that namespace and is found by its connection id', async () => {
    await createLumaIntegration(stack);
    const created = await stack.client.POST('/connections', {
      body: { provider_config_key: 'luma', connection_id: 'sa-user', credentials: { type: 'API_KEY', apiKey: 'sandbox-luma-api-key' } },
    });
    expect(created.response.status).toBe(201);
    const summary: any = await stack.waitForSync('sa-user', 'list-events');
    expect(summary.result.CalendarEvent).toEqual({ added: 10, updated: 0, deleted: 0 });
    // Visibility is eventually consistent: the run shows up in a query by Weft's attribute.
    await waitFor(
      async () => {
        const listed = await connection.workflowService.listWorkflowExecutions({ namespace, query: `WeftConnectionId = "sa-user"` });
        return (listed.executions ?? []).length > 0;
      },
      30_000,
      'the run to be listed by WeftConnectionId',
    );
  }, 90_000);
});
