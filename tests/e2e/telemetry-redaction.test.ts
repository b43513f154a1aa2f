/**
 * OpenTelemetry without secrets: the stack's telemetry pointed at an OTLP/HTTP receiver in the
 * test (tests/e2e/telemetry-receiver.ts), then the URLs that carry secrets in their query
 * requested for real: a Connect page link (`session_token`), the OAuth page
 * (`connect_session_token`) and callback (`code`, `state`), an outbound call with Graph's
 * `tempauth`, and a span of another producer with a signed URL and a Slack webhook. Every
 * span is exported, and no secret value appears in anything the receiver got.
 *
 * The SDK is process-global: it is started here only and shut down at the end of the test,
 * which also unpatches http for the next test file of this jest worker.
 */
import { get } from 'node:http';
import { trace } from '@opentelemetry/api';
import { loadConfig } from '../../common/config';
import { startTelemetry, type Telemetry } from '../../app/telemetry';
import type { WeftStack } from '../support/weft-stack';
import { attr, startOtlpReceiver, type OtlpReceiver } from './telemetry-receiver';

const OAUTH_CODE = 'oauthCodeSecret-7a6b5c4d3e';
const OAUTH_STATE = 'oauthStateSecret-1f2e3d4c5b';
const TEMPAUTH = 'tempauthSecret-0a9b8c7d6e';
const AMZ_SIGNATURE = 'amzSignatureSecret-55aa66bb';
const SLACK_SECRET = 'slackHookSecret-99cc88dd77';

describe('OpenTelemetry: spans carry no secret of a URL', () => {
  let receiver: OtlpReceiver;
  let telemetry: Telemetry | null = null;
  let stack: WeftStack;

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    const otelEnv = { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_METRICS_EXPORTER: 'none' };
    process.env.OTEL_BSP_MAX_QUEUE_SIZE = '100000';
    process.env.OTEL_BSP_SCHEDULE_DELAY = '200';
    // Before the stack's modules load, so the http instrumentation patches the server they start.
    telemetry = startTelemetry(loadConfig(otelEnv), 'weft-test');
    const { startWeftStack, createLumaIntegration } = await import('../support/weft-stack');
    stack = await startWeftStack({ telemetry, env: otelEnv, worker: false });
    await createLumaIntegration(stack);
  }, 120_000);
  afterAll(async () => {
    await stack?.shutdown();
    await telemetry?.shutdown();
    await receiver?.close();
  });

  test('Connect page, OAuth page and callback, an outbound call and any other span: redacted before export', async () => {
    const session = await stack.client.POST('/connect/sessions', { body: { allowed_integrations: ['luma'] } });
    expect(session.response.status).toBe(201);
    const sessionToken = session.data!.data.token;
    const link = new URL(session.data!.data.connect_link ?? `${stack.apiUrl}/connect?session_token=${sessionToken}`);
    const page = await fetch(`${stack.apiUrl}${link.pathname}${link.search}`);
    expect(page.status).toBe(200);
    await (await fetch(`${stack.apiUrl}/oauth/connect/luma?connect_session_token=${encodeURIComponent(sessionToken)}`)).text();
    await (await fetch(`${stack.apiUrl}/oauth/callback?code=${OAUTH_CODE}&state=${OAUTH_STATE}`)).text();
    // An outbound call through node's http (the instrumentation's client span): a pre-authenticated download link.
    await new Promise<void>((resolve) => {
      get(`${receiver.url}/_download/item1?tempauth=${TEMPAUTH}`, (res) => res.resume().on('end', resolve)).on('error', () => resolve());
    });
    // Whatever else makes a span (a workflow, a library): its URL attributes and error texts.
    const other = trace.getTracer('weft-test-other').startSpan('RunWorkflow:deliver', {
      attributes: {
        'url.full': `https://bucket.s3.amazonaws.com/f?X-Amz-Signature=${AMZ_SIGNATURE}&x-id=GetObject`,
        'url.query': `code=${OAUTH_CODE}&page=2`,
        'weft.target': `https://hooks.slack.com/services/T1/B1/${SLACK_SECRET}`,
      },
    });
    other.recordException(new Error(`POST https://hooks.slack.com/services/T1/B1/${SLACK_SECRET} failed`));
    other.end();

    await stack.shutdown();
    await telemetry!.shutdown();

    const { spans } = receiver;
    const server = (path: string) => spans.find((s) => s.kind === 2 && String(attr(s, 'http.target') ?? attr(s, 'url.path')).startsWith(path));
    // The spans were exported (so the absence below means something), their secrets replaced.
    expect(String(attr(server('/connect?')!, 'http.target'))).toBe(`/connect?session_token=REDACTED`);
    expect(String(attr(server('/oauth/connect/luma')!, 'http.target'))).toBe('/oauth/connect/luma?connect_session_token=REDACTED');
    expect(String(attr(server('/oauth/callback')!, 'http.target'))).toBe('/oauth/callback?code=REDACTED&state=REDACTED');
    expect(String(attr(server('/oauth/callback')!, 'http.url'))).toMatch(/\/oauth\/callback\?code=REDACTED&state=REDACTED$/);
    const client = spans.find((s) => s.kind === 3 && String(attr(s, 'http.url')).includes('/_download/item1'));
    expect(String(attr(client!, 'http.url'))).toMatch(/\/_download\/item1\?tempauth=REDACTED$/);
    const otherSpan = spans.find((s) => s.name === 'RunWorkflow:deliver')!;
    expect(attr(otherSpan, 'url.full')).toBe('https://bucket.s3.amazonaws.com/f?X-Amz-Signature=REDACTED&x-id=GetObject');
    expect(attr(otherSpan, 'url.query')).toBe('code=REDACTED&page=2');
    expect(attr(otherSpan, 'weft.target')).toBe('https://hooks.slack.com/services/T1/B1/REDACTED');

    const everything = receiver.bodies.join('\n');
    for (const secret of [sessionToken, OAUTH_CODE, OAUTH_STATE, TEMPAUTH, AMZ_SIGNATURE, SLACK_SECRET])
      expect([secret, everything.includes(secret)]).toEqual([secret, false]);
  }, 90_000);
});
