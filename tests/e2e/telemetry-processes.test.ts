/**
 * OpenTelemetry in `weft api` and `weft worker` as the OS processes an operator runs
 * (cli/weft.ts through tsx, as the `weft` executable does without a build): what only a real
 * process entry shows. The MongoDB driver is patched as it loads (app/telemetry-preload.ts
 * is imported before anything requires it), so database operations have spans under the API
 * request and under the activity that made them.
 */
import { LUMA_DEFAULT_API_KEY } from '../../sandbox/luma';
import { createLumaIntegration, startWeftStack, type WeftStack } from '../support/weft-stack';
import { logLine, spawnWeft, type WeftProcess } from '../support/worker-process';
import { attr, isUnder, pointAttr, startOtlpReceiver, type OtlpReceiver, type OtlpSpan } from './telemetry-receiver';

const isMongo = (s: OtlpSpan) => attr(s, 'db.system') === 'mongodb';

describe('OpenTelemetry in the weft api and weft worker processes', () => {
  let stack: WeftStack;
  let receiver: OtlpReceiver;
  const processes: WeftProcess[] = [];

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    stack = await startWeftStack({ worker: false, luma: { seed: 7, eventCount: 30 } });
    await createLumaIntegration(stack);
  });
  afterAll(async () => {
    for (const p of processes) if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
    await stack?.shutdown();
    await receiver?.close();
  });

  test('API spans are named by route; MongoDB operations have spans under the API request and under the activity that made them', async () => {
    // The API on the default encoding (http/protobuf, as OTel's), traces and metrics; the worker on http/json, traces only.
    const api = spawnWeft('api', { ...process.env, ...stack.env, OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_METRIC_EXPORT_INTERVAL: '500', PORT: '0' });
    const worker = spawnWeft('worker', {
      ...process.env,
      ...stack.env,
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_METRICS_EXPORTER: 'none',
      OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment=otel-test,service.namespace=weft',
    });
    processes.push(api, worker);
    const url = String((await logLine(api, 'weft api listening')).url);
    await logLine(worker, 'weft worker running');

    const connect = await fetch(`${url}/connections`, {
      method: 'POST',
      headers: { authorization: `Bearer ${stack.keys.dev}`, 'content-type': 'application/json' },
      body: JSON.stringify({ provider_config_key: 'luma', connection_id: 'otel-proc', credentials: { type: 'API_KEY', apiKey: LUMA_DEFAULT_API_KEY } }),
    });
    expect(connect.status).toBe(201);
    await stack.waitForSync('otel-proc', 'list-events');
    const read = await fetch(`${url}/connections/otel-proc?provider_config_key=luma`, { headers: { authorization: `Bearer ${stack.keys.dev}` } });
    expect(read.status).toBe(200);
    const proxied = await fetch(`${url}/proxy/public/v1/user/get-self`, {
      headers: { authorization: `Bearer ${stack.keys.dev}`, 'connection-id': 'otel-proc', 'provider-config-key': 'luma' },
    });
    expect(proxied.status).toBe(200);
    // Both flush their spans on a clean stop.
    api.child.kill('SIGTERM');
    worker.child.kill('SIGTERM');
    expect(await api.exited).toBe(0);
    expect(await worker.exited).toBe(0);

    const { spans } = receiver;
    const encodings = (path: string) => new Set(receiver.contentTypes.filter((c) => c.path === path).map((c) => c.contentType));
    expect(encodings('/v1/traces')).toEqual(new Set(['application/x-protobuf', 'application/json']));
    expect(encodings('/v1/metrics')).toEqual(new Set(['application/x-protobuf']));
    // The http instrumentation's request durations, decoded from protobuf.
    expect([...receiver.metrics]).toContain('weft-api/http.server.duration');
    const request = spans.find(
      (s) => s.service === 'weft-api' && s.kind === 2 && attr(s, 'http.method') === 'POST' && attr(s, 'http.target') === '/connections',
    );
    expect(request).toBeDefined();
    // Named after the route Express matched (api/middleware/route-span.ts), never the raw path with its ids.
    expect(request!.name).toBe('POST /connections');
    expect(attr(request!, 'http.route')).toBe('/connections');
    const byId = spans.find((s) => s.service === 'weft-api' && s.kind === 2 && String(attr(s, 'http.target')).startsWith('/connections/otel-proc'));
    expect(byId?.name).toBe('GET /connections/:connectionId');
    expect(attr(byId!, 'http.route')).toBe('/connections/:connectionId');
    // The proxy's catch-all router has no route pattern: its mount path.
    const proxyRequest = spans.find((s) => s.service === 'weft-api' && s.kind === 2 && String(attr(s, 'http.target')).startsWith('/proxy/'));
    expect(proxyRequest?.name).toBe('GET /proxy/*');
    // Request spans carry what the request is about: the secret key's environment, the integration and connection it names.
    for (const s of [request!, proxyRequest!])
      expect(['weft.environment', 'weft.integration', 'weft.connection_id'].map((k) => attr(s, k))).toEqual(['dev', 'luma', 'otel-proc']);
    const requestMongo = spans.filter((s) => isMongo(s) && isUnder(spans, s, request!));
    // The connection's insert (and the reads before it) ran inside the request.
    expect(requestMongo.map((s) => s.name)).toEqual(expect.arrayContaining([expect.stringMatching(/^mongodb\.insert$/)]));
    for (const s of requestMongo) {
      expect(s.service).toBe('weft-api');
      expect(attr(s, 'db.name')).toBe(stack.env.MONGODB_DB);
    }

    // Provider calls made by the API (the connection's credential check, the proxy call) carry the request's scope, as a sync's carry the activity's.
    const apiCalls = spans.filter((s) => s.service === 'weft-api' && attr(s, 'weft.provider') === 'luma');
    expect(apiCalls.map((s) => attr(s, 'weft.operation')).sort()).toEqual(['proxy', 'request']);
    for (const s of apiCalls)
      expect(['weft.environment', 'weft.integration', 'weft.connection_id'].map((k) => attr(s, k))).toEqual(['dev', 'luma', 'otel-proc']);
    // ... and their metric points the bounded part of it (no connection id).
    const proxyPoint = receiver.points.find(
      (p) => p.service === 'weft-api' && p.name === 'weft.provider.requests' && pointAttr(p, 'weft.operation') === 'proxy',
    );
    expect(proxyPoint && ['weft.environment', 'weft.integration', 'weft.connection_id'].map((k) => pointAttr(proxyPoint, k))).toEqual([
      'dev',
      'luma',
      undefined,
    ]);

    const activities = spans.filter((s) => s.service === 'weft-worker' && s.name.startsWith('RunActivity:'));
    expect(activities.length).toBeGreaterThan(0);
    // OTEL_RESOURCE_ATTRIBUTES joins the worker's resource (the service name stays Weft's default).
    const resource = Object.fromEntries(activities[0].resource.map((a) => [a.key, Object.values(a.value)[0]]));
    expect(resource).toMatchObject({ 'service.name': 'weft-worker', 'deployment.environment': 'otel-test', 'service.namespace': 'weft' });
    const activityMongo = spans.filter((s) => isMongo(s) && activities.some((a) => isUnder(spans, s, a)));
    expect(activityMongo.length).toBeGreaterThan(0);
    for (const s of activityMongo) expect(s.service).toBe('weft-worker');

    const everything = receiver.bodies.join('\n');
    for (const secret of [LUMA_DEFAULT_API_KEY, stack.keys.dev, stack.env.WEFT_ENCRYPTION_KEY]) expect(everything).not.toContain(secret);
  }, 90_000);

  test('OTEL_EXPORTER_OTLP_PROTOCOL=grpc stops weft api at start with a clear message (OTLP over HTTP only)', async () => {
    const api = spawnWeft('api', { ...process.env, ...stack.env, OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc', PORT: '0' });
    processes.push(api);
    expect(await api.exited).toBe(1);
    expect(api.output()).toContain('OTEL_EXPORTER_OTLP_PROTOCOL: must be http/protobuf (the default) or http/json; grpc is not supported');
    expect(api.output()).not.toContain('weft api listening');
  });
});
