/**
 * OpenTelemetry end to end: an OTLP/HTTP receiver inside the test (tests/e2e/telemetry-receiver.ts), the stack's
 * telemetry pointed at it through the product's configuration (OTEL_* → loadConfig →
 * app/telemetry.ts), one triggered sync, and what arrives checked: the spans of the run in one
 * trace under the API request, provider spans with their attributes, sync-run and provider
 * metric points, and no secret anywhere.
 *
 * The SDK is process-global: it is started here only (never where OTEL_* is unset) and
 * shut down in afterAll, which also unpatches http for the next test file of this jest worker.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { writeFileSync } from 'node:fs';
import { createHmac } from 'node:crypto';
import { bundleWorkflowCode } from '@temporalio/worker';
import { loadConfig } from '../../common/config';
import { startTelemetry, type Telemetry } from '../../app/telemetry';
import type { WeftStack } from '../support/weft-stack';
import { startWebhookReceiver } from '../support/webhook-receiver';
import { waitUntil } from '../support/wait';
import { attr, isUnder as isUnderIn, pointAttr, startOtlpReceiver, type OtlpReceiver } from './telemetry-receiver';

const API_KEY = 'sandbox-luma-api-key';
const WEBHOOK_SECRET = 'otel-github-webhook-secret-0123';

describe('OpenTelemetry: traces and metrics over OTLP/HTTP', () => {
  let receiver: OtlpReceiver;
  let telemetry: Telemetry | null = null;
  let stack: WeftStack;
  let webhooks: Awaited<ReturnType<typeof startWebhookReceiver>>;
  let signingKey: string;

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    const endpoint = receiver.url;
    const otelEnv = { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_METRIC_EXPORT_INTERVAL: '500' };
    // The span processor's queue (OTel's default 2,048, exported 512 every 5 s) overflowed on a
    // busy machine while the test polled /sync/status, and dropped the trigger's span: a bigger
    // queue, flushed sooner (the standard OTEL_BSP_* variables, read by the SDK itself).
    process.env.OTEL_BSP_MAX_QUEUE_SIZE = '100000';
    process.env.OTEL_BSP_SCHEDULE_DELAY = '200';
    // Before the stack's modules load, so the http instrumentation patches the server they start.
    telemetry = startTelemetry(loadConfig(otelEnv), 'weft-test');

    // The workflow side of the Temporal interceptors lives in the bundle (a prebuilt one must include it).
    const bundleFile = path.join(mkdtempSync(path.join(tmpdir(), 'weft-otel-')), 'bundle.js');
    const { code } = await bundleWorkflowCode({
      workflowsPath: path.resolve(__dirname, '../../workflows'),
      workflowInterceptorModules: [require.resolve('@temporalio/interceptors-opentelemetry/lib/workflow-interceptors')],
      logger: { trace() {}, debug() {}, info() {}, warn() {}, error: (m: string) => console.error(m), log() {} } as never,
    });
    writeFileSync(bundleFile, code);

    const { startWeftStack, createLumaIntegration, createGitHubIntegration } = await import('../support/weft-stack');
    webhooks = await startWebhookReceiver();
    stack = await startWeftStack({
      luma: { seed: 3, eventCount: 120 },
      github: { seed: 4 },
      telemetry,
      env: { ...otelEnv, WEFT_WORKFLOW_BUNDLE: bundleFile },
      egressAllow: { webhooks: [webhooks.url] },
    });
    await createLumaIntegration(stack);
    await createGitHubIntegration(stack, 'github', { webhookSecret: WEBHOOK_SECRET });
    // Each run's end sends a signed `sync` webhook: its delivery is measured, its key never exported.
    expect((await stack.api('PATCH', '/environment', { body: { webhook_url: webhooks.url } })).status).toBe(200);
    signingKey = (await stack.api('POST', '/environment/webhook-signing-key/rotate')).body.data.webhook_signing_key;
  });
  afterAll(async () => {
    await stack?.shutdown();
    await telemetry?.shutdown();
    await receiver?.close();
    await webhooks?.close();
  });

  // First: the next test stops the worker and shuts the SDK down.
  test('a provider webhook delivery: one span and one point by provider and outcome; its secret exported nowhere', async () => {
    const body = JSON.stringify({ action: 'opened', installation: { id: 777 } });
    const res = await fetch(`${stack.apiUrl}/webhooks/providers/dev/github`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-github-event': 'pull_request',
        'x-github-delivery': 'otel-delivery-1',
        'x-hub-signature-256': `sha256=${createHmac('sha256', WEBHOOK_SECRET).update(body).digest('hex')}`,
      },
      body,
    });
    expect(res.status).toBe(202);
    await waitUntil(
      () =>
        receiver.spans.some((s) => s.name === 'weft.provider_delivery' && attr(s, 'weft.outcome') === 'unmatched') &&
        receiver.points.some((p) => p.name === 'weft.provider_webhook.deliveries' && pointAttr(p, 'weft.outcome') === 'unmatched'),
      30_000,
    );
    const span = receiver.spans.find((s) => s.name === 'weft.provider_delivery')!;
    expect([attr(span, 'weft.provider'), attr(span, 'weft.integration'), attr(span, 'weft.provider_event')]).toEqual(['github', 'github', 'pull_request']);
    const point = receiver.points.find((p) => p.name === 'weft.provider_webhook.deliveries')!;
    expect(pointAttr(point, 'weft.provider')).toBe('github');
    expect(receiver.bodies.join('\n')).not.toContain(WEBHOOK_SECRET);
  }, 60_000);

  test('POST /sync/trigger → workflow → activities → every provider call: one trace; metric points; no secrets', async () => {
    const created = await stack.api('POST', '/connections', {
      body: { provider_config_key: 'luma', connection_id: 'otel-1', credentials: { type: 'API_KEY', apiKey: API_KEY } },
    });
    expect(created.body).toMatchObject({});
    expect(created.status).toBe(201);
    await stack.waitForSync('otel-1', 'list-events'); // the initial (auto-started) run
    const lumaRequestsBefore = stack.luma.stats().requests;
    const trigger = await stack.api('POST', '/sync/trigger', { body: { provider_config_key: 'luma', connection_id: 'otel-1', syncs: ['list-events'] } });
    expect(trigger.body).toEqual({ success: true });
    await stack.waitForSync('otel-1', 'list-events');
    const runCalls = stack.luma.stats().requests - lumaRequestsBefore;
    await webhooks.waitFor((w) => w.body?.type === 'sync' && w.body?.connectionId === 'otel-1' && w.body?.success === true);
    // Workers flush workflow spans through their sink; the batch processor and the metric reader export on shutdown.
    await stack.stopWorker();
    await telemetry!.shutdown();

    const { spans } = receiver;
    // Metric names without the exporting service (the Temporal core's metrics come as protobuf, decoded too).
    const metricNames = new Set([...receiver.metrics].map((m) => m.slice(m.indexOf('/') + 1)));
    const request = spans.find((s) => s.kind === 2 && String(attr(s, 'http.target') ?? attr(s, 'url.path')).startsWith('/sync/trigger'));
    expect(request).toBeDefined();
    expect(request!.name).toBe('POST /sync/trigger');
    expect(attr(request!, 'http.route')).toBe('/sync/trigger');
    const trace = spans.filter((s) => s.traceId === request!.traceId);
    const isUnder = (s: (typeof spans)[number], ancestor: (typeof spans)[number]) => isUnderIn(spans, s, ancestor);
    const names = trace.map((s) => s.name);
    expect(names).toEqual(expect.arrayContaining([expect.stringMatching(/^StartWorkflow:syncRun/), expect.stringMatching(/^RunWorkflow:syncRun/)]));
    const activities = trace.filter((s) => s.name.startsWith('RunActivity:'));
    expect(activities.map((s) => s.name)).toEqual(expect.arrayContaining(['RunActivity:performSyncRun']));
    const providerCalls = trace.filter((s) => attr(s, 'weft.provider') === 'luma');
    // Every Luma request of the run (120 events: more than one page) has its span in the trigger's trace.
    expect(runCalls).toBeGreaterThanOrEqual(2);
    expect(providerCalls).toHaveLength(runCalls);
    for (const s of [...activities, ...providerCalls]) expect(isUnder(s, request!)).toBe(true);
    // The sync's span and its provider calls say what they are about (the activity's scope).
    const scope = { 'weft.environment': 'dev', 'weft.integration': 'luma', 'weft.connection_id': 'otel-1', 'weft.sync': 'list-events' };
    const runActivity = activities.find((s) => s.name === 'RunActivity:performSyncRun');
    for (const s of [runActivity!, ...providerCalls]) for (const [key, value] of Object.entries(scope)) expect([key, attr(s, key)]).toEqual([key, value]);
    for (const s of providerCalls) {
      expect(attr(s, 'weft.operation')).toBe('request');
      expect(attr(s, 'http.request.method')).toBe('GET');
      expect(Number(attr(s, 'http.response.status_code'))).toBe(200);
      expect(Number(attr(s, 'weft.attempt'))).toBeGreaterThanOrEqual(1);
      expect(String(attr(s, 'url.full'))).toContain(stack.luma.url);
    }

    expect([...metricNames]).toEqual(
      expect.arrayContaining([
        'weft.sync.runs',
        'weft.sync.run.duration',
        'weft.sync.records',
        'weft.provider.requests',
        'weft.provider.request.duration',
        'weft.webhook.attempts',
      ]),
    );

    // Sync-run and provider points carry the environment, the integration and the sync; no point carries a connection id.
    const runPoint = receiver.points.find((p) => p.name === 'weft.sync.runs' && pointAttr(p, 'weft.outcome') === 'success');
    expect(runPoint && [pointAttr(runPoint, 'weft.environment'), pointAttr(runPoint, 'weft.integration')]).toEqual(['dev', 'luma']);
    // (The connection's credential check from the API runs outside any sync: its points have no sync.)
    const syncRequestPoints = receiver.points.filter((p) => p.name === 'weft.provider.requests' && pointAttr(p, 'weft.sync') === 'list-events');
    expect(syncRequestPoints.length).toBeGreaterThan(0);
    for (const p of syncRequestPoints) expect([pointAttr(p, 'weft.environment'), pointAttr(p, 'weft.integration')]).toEqual(['dev', 'luma']);
    expect(receiver.points.filter((p) => pointAttr(p, 'weft.connection_id') !== undefined)).toEqual([]);

    // The worker's own metrics (Runtime.install with OTLP/HTTP): task and poller figures from Temporal's core.
    expect([...metricNames]).toEqual(expect.arrayContaining(['temporal_workflow_completed', 'temporal_activity_execution_latency', 'temporal_num_pollers']));

    const everything = receiver.bodies.join('\n');
    for (const secret of [API_KEY, stack.keys.dev, stack.keys.prod, stack.env.WEFT_ENCRYPTION_KEY, signingKey]) expect(everything).not.toContain(secret);
  }, 90_000);
});
