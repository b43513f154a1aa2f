import { SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { redactUrl } from '../../common/secrets';
import { lazyInstruments } from '../../common/telemetry';
import { scopeMetricAttributes, scopeSpanAttributes, weftScopesEnabled } from '../../common/telemetry-scope';

/**
 * Spans and metrics of third-party calls, on the process-global OpenTelemetry API: without a
 * started SDK (app/telemetry.ts, OTEL_* unset) every call here is a no-op.
 */
const tracer = trace.getTracer('weft.provider');
const instruments = lazyInstruments('weft.provider', (meter) => ({
  calls: meter.createCounter('weft.provider.requests', { description: 'Requests to third-party APIs (each attempt)' }),
  errors: meter.createCounter('weft.provider.errors', { description: 'Third-party requests that failed or answered >= 400' }),
  latency: meter.createHistogram('weft.provider.request.duration', { unit: 'ms', description: 'Latency of third-party requests' }),
  throttleWait: meter.createHistogram('weft.provider.throttle.wait', { unit: 'ms', description: 'Time waited for the rate limit before a request' }),
}));

export interface ProviderAttempt {
  provider: string;
  /** `request` (a sync's or action's call) or `proxy`. */
  operation: string;
  method: string;
  /** Redacted by the caller (egress/redact.ts redactUrl), and again here: a span leaves the process. */
  url: string;
  status: number | null;
  started: number;
  attempt: number;
  waitMs: number;
  error: string | null;
}

/**
 * One span (a child of the active one: the activity's, the API request's) and the metric points
 * of one attempt, with the scope of the work it is part of (environment, integration, sync or
 * action; the connection id on the span only).
 */
export function recordProviderAttempt(a: ProviderAttempt): void {
  // No telemetry running (app/telemetry.ts sets this with its SDK): the span and the points
  // would be no-ops, built and redacted for nothing (2 % of the API's CPU per proxied call).
  if (!weftScopesEnabled()) return;
  const end = Date.now();
  const attrs = { 'weft.provider': a.provider, 'weft.operation': a.operation, 'http.request.method': a.method, ...scopeMetricAttributes() };
  const span = tracer.startSpan(`${a.provider} ${a.method}`, {
    kind: SpanKind.CLIENT,
    startTime: a.started,
    attributes: {
      ...attrs,
      ...scopeSpanAttributes(),
      'url.full': redactUrl(a.url),
      'weft.attempt': a.attempt,
      'weft.rate_limit_wait_ms': a.waitMs,
      ...(a.status !== null && { 'http.response.status_code': a.status }),
    },
  });
  if (a.error) span.setStatus({ code: SpanStatusCode.ERROR, message: a.error });
  span.end(end);
  const metricAttrs = { ...attrs, 'http.response.status_code': a.status ?? 0 };
  const { calls, latency, errors, throttleWait } = instruments();
  calls.add(1, metricAttrs);
  latency.record(end - a.started, metricAttrs);
  if (a.error) errors.add(1, metricAttrs);
  if (a.waitMs > 0) throttleWait.record(a.waitMs, attrs);
}
