import { toCalendarEvent } from '../../integrations/luma/mappers';
import { connectGitHub, createGitHubIntegration, createLumaIntegration, runSync, startWeftStack, type WeftStack } from '../support/weft-stack';
import { listRecords, triggerAction, type ActionInput, type ActionName, type RecordModel } from '../../cli/api-client/client';

const INSTALLATION = 1001;
const GITHUB = { 'connection-id': 'gh-writer', 'provider-config-key': 'github' };
const LUMA = { 'connection-id': 'luma-writer', 'provider-config-key': 'luma' };
const connectionOf = (headers: typeof GITHUB) => ({ connectionId: headers['connection-id'], providerConfigKey: headers['provider-config-key'] });

/**
 * Write actions (2-way sync) on the real stack with the GitHub and Luma simulators: each
 * action through POST /action/trigger changes the provider, saves what it wrote to the
 * records cache (GET /records shows it at once), and the next sync run finds it unchanged.
 */
describe('GitHub and Luma write actions, end to end', () => {
  let stack: WeftStack;

  beforeAll(async () => {
    stack = await startWeftStack({
      // Pages of 10: a full run takes a few round trips, so an action can land in the middle of one.
      luma: { seed: 11, eventCount: 40, maxPageSize: 10, defaultPageSize: 10 },
      github: {
        seed: 5,
        installations: [{ id: INSTALLATION, account: { login: 'acme', type: 'Organization' }, repositoryCount: 2 }],
        pullsPerRepo: 15,
        commitsPerPull: [1, 2],
        oversizedPulls: 0,
      },
    });
    await createGitHubIntegration(stack);
    expect((await connectGitHub(stack, 'gh-writer')).status).toBe(201);
    await createLumaIntegration(stack);
    const luma = await stack.client.POST('/connections', {
      body: { provider_config_key: 'luma', connection_id: 'luma-writer', credentials: { type: 'API_KEY', apiKey: 'sandbox-luma-api-key' } },
    });
    expect(luma.response.status).toBe(201);
    // The syncs start by themselves with their connections.
    await stack.waitForSync('gh-writer', 'pull-requests', { providerConfigKey: 'github' });
    await stack.waitForSync('luma-writer', 'list-events');
  });
  afterAll(async () => stack?.shutdown());

  /** The record `id` of `model`, typed as that model (the typed client). */
  async function record<M extends RecordModel>(headers: typeof GITHUB, model: M, id: string) {
    const page = await listRecords(stack.client, { model, ids: [id], ...connectionOf(headers) });
    return page.records[0];
  }

  /** POST /action/trigger through the typed client: the input and output typed as the action's. */
  const trigger = <A extends ActionName>(headers: typeof GITHUB, action: A, input: ActionInput<A>) =>
    triggerAction(stack.client, { action, input, ...connectionOf(headers) });

  async function latestResult(providerConfigKey: string, connectionId: string, sync: string) {
    const res = await stack.client.GET('/sync/status', {
      params: { query: { provider_config_key: providerConfigKey, syncs: sync, connection_id: connectionId } },
    });
    expect(res.response.status).toBe(200);
    return res.data!.syncs[0].latestResult;
  }

  const patches = () => stack.github.requestLog().filter((e) => e.method === 'PATCH').length;
  const creates = () => stack.luma.requestLog().filter((e) => e.method === 'POST').length;

  test('github update-pull-request: the pull request changes, GET /records shows it at once, the next run counts nothing twice', async () => {
    const repo = stack.github.repositories(INSTALLATION)[0].full_name as string;
    const pull = stack.github.pullRequests(repo, { state: 'open' })[0] as any;
    const input = { repository: repo, pull_number: pull.number, title: 'Weft: a clearer title', body: 'Edited through Weft.', state: 'closed' as const };

    const res = await trigger(GITHUB, 'update-pull-request', input);
    expect(res.response.status).toBe(200);
    const updated = res.data!;
    expect(updated).toMatchObject({ id: String(pull.id), number: pull.number, repository: repo, title: input.title, state: 'closed' });
    expect(updated.closed_at).not.toBeNull();
    expect(updated.updated_at > pull.updated_at || updated.updated_at === pull.updated_at).toBe(true);

    // The provider has it, as its listing shows it to the sync.
    const after = stack.github.pullRequests(repo).find((p: any) => p.number === pull.number) as any;
    expect(after).toMatchObject({ title: input.title, body: input.body, state: 'closed', updated_at: updated.updated_at });
    // Updated last: the incremental walk (newest update first, down to its checkpoint) reaches it first.
    expect((stack.github.pullRequests(repo, { sort: 'updated', direction: 'desc' })[0] as any).number).toBe(pull.number);

    // The cache has it at once, as the sync stores it.
    const cached = await record(GITHUB, 'PullRequest', String(pull.id));
    const { _weft_metadata: meta, ...data } = cached;
    expect(data).toEqual(updated);
    expect(meta.last_action).toBe('UPDATED');

    // The next (incremental) run lists it again (its updated_at moved) and finds it unchanged.
    const summary = await runSync(stack, 'github', 'gh-writer', 'pull-requests');
    expect(summary.result.PullRequest).toEqual({ added: 0, updated: 0, deleted: 0 });
    expect(await latestResult('github', 'gh-writer', 'pull-requests')).toEqual({ PullRequest: { added: 0, updated: 0, deleted: 0 } });
    expect(stack.github.requestLog().some((e) => e.method === 'GET' && e.path === `/repos/${repo}/pulls`)).toBe(true);
    expect((await record(GITHUB, 'PullRequest', String(pull.id)))._weft_metadata.cursor).toBe(meta.cursor);
  });

  test("github update-pull-request: bad input is refused before GitHub; GitHub's 422 and 404 come back with stable codes", async () => {
    const repo = stack.github.repositories(INSTALLATION)[1].full_name as string;
    const before = patches();
    const bad = await stack.api('POST', '/action/trigger', {
      headers: GITHUB,
      body: { action_name: 'update-pull-request', input: { repository: repo, pull_number: 1, state: 'merged' } },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ code: 'invalid_action_input', errors: [{ path: 'state' }] });
    const nothing = await stack.api('POST', '/action/trigger', {
      headers: GITHUB,
      body: { action_name: 'update-pull-request', input: { repository: repo, pull_number: 1 } },
    });
    expect(nothing.status).toBe(400);
    expect(nothing.body.error.code).toBe('invalid_action_input');
    // The same at the action's own endpoint. (Malformed on purpose: these stay on the untyped helper.)
    const own = await stack.api('POST', '/v1/update-pull-request', { headers: GITHUB, body: { repository: 'no-slash', pull_number: 1, title: 'x' } });
    expect(own.status).toBe(400);
    expect(own.body.error).toMatchObject({ code: 'invalid_action_input', errors: [{ path: 'repository' }] });
    expect(patches()).toBe(before);

    // A merged pull request cannot be reopened: GitHub answers 422 Validation Failed.
    const merged = stack.github.pullRequests(repo).find((p: any) => p.merged_at !== null) as any;
    const refused = await trigger(GITHUB, 'update-pull-request', { repository: repo, pull_number: merged.number, state: 'open' });
    expect(refused.response.status).toBe(424);
    expect(refused.error?.error).toMatchObject({ code: 'pull_request_update_rejected', upstream: { status: 422, body: { message: 'Validation Failed' } } });
    expect(refused.error?.error.message).toContain('state');
    expect(JSON.stringify(refused.error)).not.toMatch(/ghs_|PRIVATE KEY/);

    const missing = await trigger(GITHUB, 'update-pull-request', { repository: repo, pull_number: 999_999, title: 'x' });
    expect(missing.response.status).toBe(404);
    expect(missing.error?.error.code).toBe('pull_request_not_found');
    expect(patches()).toBe(before + 2);
  });

  test('luma create-event: the event is created, GET /records shows it at once, the next full run neither adds nor deletes it', async () => {
    const input = {
      name: 'Weft launch party',
      start_at: '2027-03-01T18:00:00.000Z',
      timezone: 'Europe/Berlin',
      duration_interval: 'PT2H',
      description_md: '**Drinks** and demos.',
      meeting_url: 'https://meet.google.com/abc-defg-hij',
      visibility: 'public' as const,
    };
    const count = stack.luma.eventIds().length;
    const res = await trigger(LUMA, 'create-event', input);
    expect(res.response.status).toBe(200);
    const created = res.data!;
    expect(created).toMatchObject({
      id: expect.stringMatching(/^evt-/),
      name: input.name,
      start_at: input.start_at,
      end_at: '2027-03-01T20:00:00.000Z',
      timezone: input.timezone,
      description: input.description_md,
      meeting_url: input.meeting_url,
      visibility: 'public',
      tags: [],
    });

    // The calendar lists it, exactly as the action returned it.
    expect(stack.luma.eventIds()).toHaveLength(count + 1);
    expect(toCalendarEvent(stack.luma.getEvent(created.id) as never)).toEqual(created);
    const cached = await record(LUMA, 'CalendarEvent', created.id);
    const { _weft_metadata: meta, ...data } = cached;
    expect(data).toEqual(created);
    expect(meta.last_action).toBe('ADDED');

    const summary = await runSync(stack, 'luma', 'luma-writer', 'list-events');
    expect(summary.result.CalendarEvent).toEqual({ added: 0, updated: 0, deleted: 0 });
    expect(summary.recordCount.CalendarEvent).toBe(count + 1);
    expect(await latestResult('luma', 'luma-writer', 'list-events')).toEqual({ CalendarEvent: { added: 0, updated: 0, deleted: 0 } });
    expect((await record(LUMA, 'CalendarEvent', created.id))._weft_metadata).toMatchObject({ cursor: meta.cursor, deleted_at: null });
  });

  test('luma create-event during a full run in progress: the run, whose listing came before the event, does not delete it', async () => {
    stack.luma.setLatency(150);
    try {
      const listed = () => stack.luma.requestLog().filter((e) => e.path === '/public/v1/calendar/list-events').length;
      const before = listed();
      const started = await stack.client.POST('/sync/trigger', { body: { provider_config_key: 'luma', connection_id: 'luma-writer', syncs: ['list-events'] } });
      expect(started.response.status).toBe(200);
      // The run has asked for its first page: an event starting before every other is not in what it lists.
      for (let i = 0; i < 100 && listed() === before; i++) await new Promise((r) => setTimeout(r, 10));
      const res = await trigger(LUMA, 'create-event', { name: 'Early bird', start_at: '2001-01-01T09:00:00Z', timezone: 'UTC' });
      expect(res.response.status).toBe(200);
      const summary: any = await stack.waitForSync('luma-writer', 'list-events');
      // The run was still listing when the event was created, and did not list it.
      const log = stack.luma.requestLog();
      expect(log.findIndex((e) => e.method === 'POST')).toBeLessThan(log.map((e) => e.path).lastIndexOf('/public/v1/calendar/list-events'));
      expect(summary.result.CalendarEvent).toEqual({ added: 0, updated: 0, deleted: 0 });
      expect((await record(LUMA, 'CalendarEvent', res.data!.id))._weft_metadata.deleted_at).toBeNull();
    } finally {
      stack.luma.setLatency(0);
    }
    // The next run lists it: unchanged.
    const next = await runSync(stack, 'luma', 'luma-writer', 'list-events');
    expect(next.result.CalendarEvent).toEqual({ added: 0, updated: 0, deleted: 0 });
  });

  test("luma create-event: bad input is refused before Luma; Luma's 400 comes back with a stable code and creates nothing", async () => {
    const before = creates();
    const count = stack.luma.eventIds().length;
    const bad = await stack.api('POST', '/action/trigger', {
      headers: LUMA,
      body: { action_name: 'create-event', input: { name: 'No zone', start_at: '2027-03-01T18:00:00Z', timezone: 'Mars/Olympus_Mons' } },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ code: 'invalid_action_input', errors: [{ path: 'timezone' }] });
    const backwards = await stack.api('POST', '/action/trigger', {
      headers: LUMA,
      body: { action_name: 'create-event', input: { name: 'Ends first', start_at: '2027-03-01T18:00:00Z', end_at: '2027-03-01T17:00:00Z', timezone: 'UTC' } },
    });
    expect(backwards.status).toBe(400);
    expect(backwards.body.error).toMatchObject({ code: 'invalid_action_input', errors: [{ path: 'end_at' }] });
    expect(creates()).toBe(before);

    // A zero-length duration passes the input's shape; Luma refuses it.
    const refused = await trigger(LUMA, 'create-event', { name: 'Instant', start_at: '2027-03-01T18:00:00Z', duration_interval: 'PT0M', timezone: 'UTC' });
    expect(refused.response.status).toBe(424);
    expect(refused.error?.error).toMatchObject({ code: 'event_rejected', upstream: { status: 400 } });
    expect(refused.error?.error.message).toContain('duration_interval');
    expect(JSON.stringify(refused.error)).not.toContain('sandbox-luma-api-key');
    expect(creates()).toBe(before + 1);
    expect(stack.luma.eventIds()).toHaveLength(count);
  });
});
