import { connectOneDrive, createOneDriveIntegration, startWeftStack, type WeftStack } from '../support/weft-stack';

/**
 * A sync-mode action call waits for its output only so long: past its deadline the API
 * answers 504 action_timeout with the id to poll, and the action goes on running; its
 * output is read later at GET /action/:id, as in async mode.
 */

/**
 * Graph answers this slowly during the tests below: list-drives takes at least this long, far
 * past the deadlines used (1 s, 1.5 s), so an answer before it can only be the deadline's and
 * the action is still running when it comes, however slow a loaded machine makes the call.
 */
const GRAPH_LATENCY_MS = 10_000;
const HEADERS = { 'connection-id': 'drive-user', 'provider-config-key': 'one-drive' };

describe('the deadline of a sync-mode action', () => {
  let stack: WeftStack;

  beforeAll(async () => {
    // The configured default (WEFT_ACTION_TIMEOUT_MS) is short here so a test can outlast it.
    stack = await startWeftStack({ graph: {}, actionTimeoutMs: 1_500 });
    await createOneDriveIntegration(stack);
    expect((await connectOneDrive(stack, 'drive-user')).status).toBe(201);
  });
  afterAll(async () => stack?.shutdown());
  beforeEach(() => stack.graph.setLatency(GRAPH_LATENCY_MS));
  afterEach(() => stack.graph.setLatency(0));

  /** Polls GET /action/:id until it stops answering 404 action_pending. */
  async function outputOf(id: string, timeoutMs = 60_000) {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const res = await stack.api('GET', `/action/${id}`);
      if (!(res.status === 404 && res.body.error.code === 'action_pending') || Date.now() > deadline) return res;
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  const expectedDrives = () =>
    stack.graph
      .drives()
      .map((d) => d.id)
      .sort();

  test('POST /action/trigger past X-Action-Timeout: 504 action_timeout with the id; the action finishes and its output is read later', async () => {
    const res = await stack.api('POST', '/action/trigger', {
      headers: { ...HEADERS, 'x-action-timeout': '1' },
      body: { action_name: 'list-drives', input: {} },
    });
    expect(res.status).toBe(504);
    expect(res.body.error).toEqual({
      code: 'action_timeout',
      message: expect.stringContaining('keeps running'),
      id: expect.any(String),
      statusUrl: `/action/${res.body.error.id}`,
    });

    // Still running right after the 504 ...
    const pending = await stack.api('GET', res.body.error.statusUrl);
    expect(pending.status).toBe(404);
    expect(pending.body.error.code).toBe('action_pending');
    // ... and its output is there once it is done.
    const done = await outputOf(res.body.error.id);
    expect(done.status).toBe(200);
    expect(done.body.drives.map((d: any) => d.id).sort()).toEqual(expectedDrives());
  });

  test('GET /v1/<action> has the same deadline', async () => {
    const res = await stack.api('GET', '/v1/list-drives', { headers: { ...HEADERS, 'x-action-timeout': '1' } });
    expect(res.status).toBe(504);
    expect(res.body.error).toMatchObject({ code: 'action_timeout', statusUrl: `/action/${res.body.error.id}` });
    expect((await outputOf(res.body.error.id)).body.drives.map((d: any) => d.id).sort()).toEqual(expectedDrives());
  });

  test('without the header the configured default applies; a longer header lets the call wait for the output', async () => {
    const byDefault = await stack.api('POST', '/action/trigger', { headers: HEADERS, body: { action_name: 'list-drives', input: {} } });
    // The whole answer, so a failure shows the error the API gave.
    expect({ status: byDefault.status, code: byDefault.body.error?.code }).toEqual({ status: 504, code: 'action_timeout' });

    const patient = await stack.api('POST', '/action/trigger', {
      headers: { ...HEADERS, 'x-action-timeout': '60' },
      body: { action_name: 'list-drives', input: {} },
    });
    expect(patient.status).toBe(200);
    expect(patient.body.drives.map((d: any) => d.id).sort()).toEqual(expectedDrives());
  });

  test('an X-Action-Timeout out of bounds is refused before anything runs', async () => {
    stack.graph.setLatency(0);
    stack.graph.resetStats();
    for (const value of ['0', '301', 'soon', '1.5', '-3']) {
      const res = await stack.api('POST', '/action/trigger', {
        headers: { ...HEADERS, 'x-action-timeout': value },
        body: { action_name: 'list-drives', input: {} },
      });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('invalid_headers');
      expect(res.body.error.errors.map((e: any) => e.path)).toContain('x-action-timeout');
    }
    // Nothing ran: Graph never heard of these calls.
    await new Promise((r) => setTimeout(r, 500));
    expect(stack.graph.requestLog()).toEqual([]);
  });
});
