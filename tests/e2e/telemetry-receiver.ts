import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

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
  close(): Promise<void>;
}

interface JsonResourceSpans {
  resource?: { attributes?: OtlpSpan['attributes'] };
  scopeSpans?: Array<{ spans?: Array<Omit<OtlpSpan, 'service'>> }>;
}

function serviceOf(rs: JsonResourceSpans): string {
  const a = rs.resource?.attributes?.find((x) => x.key === 'service.name');
  return a ? String(Object.values(a.value)[0]) : '';
}

/** An OTLP/HTTP receiver inside the test: collects the spans of OTLP/JSON trace exports. */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: OtlpSpan[] = [];
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
      if (contentType.includes('json') && req.url === '/v1/traces') {
        const body = JSON.parse(raw.toString('utf8')) as { resourceSpans?: JsonResourceSpans[] };
        for (const rs of body.resourceSpans ?? [])
          for (const ss of rs.scopeSpans ?? []) for (const s of ss.spans ?? []) spans.push({ ...s, service: serviceOf(rs) });
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
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
