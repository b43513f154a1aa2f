import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** protobufjs decoders of the OTLP messages, generated into the OTel JS transformer the proto exporters use. */
interface ProtoMessageType {
  decode(bytes: Uint8Array): unknown;
  toObject(message: unknown, options: { longs: StringConstructor; bytes: StringConstructor }): unknown;
}
// eslint-disable-next-line @typescript-eslint/no-require-imports -- a generated CommonJS module without types of this shape
const otlp = require('@opentelemetry/otlp-transformer/build/src/generated/root').opentelemetry.proto.collector as {
  trace: { v1: { ExportTraceServiceRequest: ProtoMessageType } };
  metrics: { v1: { ExportMetricsServiceRequest: ProtoMessageType } };
};

/** A protobuf request as the JSON encoding has it (ids hex instead of base64). */
function fromProtobuf(type: ProtoMessageType, raw: Buffer): unknown {
  const obj = type.toObject(type.decode(raw), { longs: String, bytes: String });
  const hexIds = (span: Record<string, unknown>) => {
    for (const key of ['traceId', 'spanId', 'parentSpanId'])
      if (typeof span[key] === 'string') span[key] = span[key] ? Buffer.from(span[key] as string, 'base64').toString('hex') : undefined;
  };
  for (const rs of (obj as { resourceSpans?: JsonResourceSpans[] }).resourceSpans ?? [])
    for (const ss of rs.scopeSpans ?? []) for (const span of ss.spans ?? []) hexIds(span as unknown as Record<string, unknown>);
  return obj;
}

/** A span as OTLP/JSON carries it (ids in hex). */
export interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: Array<{ key: string; value: Record<string, unknown> }>;
  /** service.name of the process that exported it. */
  service: string;
  /** Its resource's attributes (service.name, OTEL_RESOURCE_ATTRIBUTES, ...). */
  resource: OtlpSpan['attributes'];
}

export function attr(span: OtlpSpan, key: string): unknown {
  const v = span.attributes.find((a) => a.key === key)?.value;
  return v === undefined ? undefined : Object.values(v)[0];
}

/** Whether `ancestor` is on the parent chain of `span` (within the spans received). */
export function isUnder(spans: OtlpSpan[], span: OtlpSpan, ancestor: OtlpSpan): boolean {
  const byId = new Map(spans.filter((s) => s.traceId === span.traceId).map((s) => [s.spanId, s]));
  for (let p = span.parentSpanId ? byId.get(span.parentSpanId) : undefined; p; p = p.parentSpanId ? byId.get(p.parentSpanId) : undefined)
    if (p.spanId === ancestor.spanId) return true;
  return false;
}

export interface OtlpReceiver {
  /** Base URL: OTEL_EXPORTER_OTLP_ENDPOINT. */
  url: string;
  spans: OtlpSpan[];
  /** Every request body as received (raw text or bytes as latin1), for the no-secrets check. */
  bodies: string[];
  /** Content types of the requests, by path. */
  contentTypes: Array<{ path: string; contentType: string }>;
  /** Names of the metrics received, with the service that exported them (`service/name`; Temporal's core: `/temporal_…`). */
  metrics: Set<string>;
  /** Every data point received, with its metric's name and its attributes. */
  points: MetricPoint[];
  close(): Promise<void>;
}

interface JsonResourceSpans {
  resource?: { attributes?: OtlpSpan['attributes'] };
  scopeSpans?: Array<{ spans?: Array<Omit<OtlpSpan, 'service' | 'resource'>> }>;
}

export interface MetricPoint {
  service: string;
  name: string;
  attributes: OtlpSpan['attributes'];
}

type JsonDataPoints = { dataPoints?: Array<{ attributes?: OtlpSpan['attributes'] }> };

interface JsonResourceMetrics {
  resource?: { attributes?: OtlpSpan['attributes'] };
  scopeMetrics?: Array<{ metrics?: Array<{ name: string; sum?: JsonDataPoints; gauge?: JsonDataPoints; histogram?: JsonDataPoints }> }>;
}

/** A point's attribute value, as attr() reads a span's. */
export function pointAttr(point: MetricPoint, key: string): unknown {
  return attr(point as unknown as OtlpSpan, key);
}

function serviceOf(rs: { resource?: { attributes?: OtlpSpan['attributes'] } }): string {
  const a = rs.resource?.attributes?.find((x) => x.key === 'service.name');
  return a ? String(Object.values(a.value)[0]) : '';
}

/** An OTLP/HTTP receiver inside the test, JSON or protobuf: collects the spans and metric names exported. */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: OtlpSpan[] = [];
  const metrics = new Set<string>();
  const points: MetricPoint[] = [];
  const bodies: string[] = [];
  const contentTypes: OtlpReceiver['contentTypes'] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const contentType = String(req.headers['content-type']);
      contentTypes.push({ path: req.url ?? '', contentType });
      bodies.push(raw.toString(contentType.includes('json') ? 'utf8' : 'latin1'));
      const json = contentType.includes('json');
      if (req.url === '/v1/traces') {
        const body = (json ? JSON.parse(raw.toString('utf8')) : fromProtobuf(otlp.trace.v1.ExportTraceServiceRequest, raw)) as {
          resourceSpans?: JsonResourceSpans[];
        };
        for (const rs of body.resourceSpans ?? [])
          for (const ss of rs.scopeSpans ?? [])
            for (const s of ss.spans ?? []) spans.push({ ...s, service: serviceOf(rs), resource: rs.resource?.attributes ?? [] });
      }
      if (req.url === '/v1/metrics') {
        const body = (json ? JSON.parse(raw.toString('utf8')) : fromProtobuf(otlp.metrics.v1.ExportMetricsServiceRequest, raw)) as {
          resourceMetrics?: JsonResourceMetrics[];
        };
        for (const rm of body.resourceMetrics ?? [])
          for (const sm of rm.scopeMetrics ?? [])
            for (const m of sm.metrics ?? []) {
              metrics.add(`${serviceOf(rm)}/${m.name}`);
              for (const dp of [m.sum, m.gauge, m.histogram].flatMap((d) => d?.dataPoints ?? []))
                points.push({ service: serviceOf(rm), name: m.name, attributes: dp.attributes ?? [] });
            }
      }
      res
        .writeHead(200, { 'content-type': contentType.includes('json') ? 'application/json' : 'application/x-protobuf' })
        .end(contentType.includes('json') ? '{}' : '');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans,
    bodies,
    contentTypes,
    metrics,
    points,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
