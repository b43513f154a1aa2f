import type { Context } from '@opentelemetry/api';
import type { ReadableSpan, Span, SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { redactText, redactUrl } from '../common/secrets';

/**
 * Span attributes that hold a URL or a part of one (old and current HTTP conventions), whose
 * secrets a span must not carry out: a Connect page's `session_token`, the OAuth callback's
 * `code` and `state`, Graph's `tempauth`, a webhook URL's path.
 */
const URL_ATTRIBUTES = new Set(['http.url', 'http.target', 'http.route', 'url.full', 'url.path', 'url.original', 'url.template', 'http.request.url']);
/** The query alone (`url.query`: `a=1&code=…`, without `?`). */
const QUERY_ATTRIBUTES = new Set(['url.query', 'http.query']);

/**
 * Every span, whoever made it (the http instrumentation's server and client spans, the
 * provider client's, Temporal's workflow and activity spans), redacted by common/secrets as
 * it ends, before `next` (the batch exporter) sees it: URL attributes as Weft's own URLs
 * (OAuth `state` too), every other string attribute, event attribute, status message and the
 * name for the URLs and form bodies in them.
 */
export class RedactingSpanProcessor implements SpanProcessor {
  constructor(private readonly next: SpanProcessor) {}

  onStart(span: Span, parentContext: Context): void {
    this.next.onStart(span, parentContext);
  }

  onEnd(span: ReadableSpan): void {
    this.next.onEnd(redactedSpan(span));
  }

  forceFlush(): Promise<void> {
    return this.next.forceFlush();
  }

  shutdown(): Promise<void> {
    return this.next.shutdown();
  }
}

/**
 * The span as the exporter reads it, secrets replaced. A view, not a change of the span:
 * spans rebuilt from a workflow's sink may be frozen, and a processor that came before this
 * one keeps what it saw.
 */
function redactedSpan(span: ReadableSpan): ReadableSpan {
  const attributes = redactAttributes(span.attributes);
  const events = span.events.map((e) => (e.attributes ? { ...e, attributes: redactAttributes(e.attributes) } : e));
  const status = span.status.message ? { ...span.status, message: redactText(span.status.message, { inbound: true }) } : span.status;
  const name = redactText(span.name, { inbound: true });
  const replaced: Partial<Record<keyof ReadableSpan, unknown>> = { attributes, events, status, name };
  return new Proxy(span, {
    get(target, prop, receiver) {
      if (typeof prop === 'string' && prop in replaced) return replaced[prop as keyof ReadableSpan];
      const value: unknown = Reflect.get(target, prop, receiver);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

function redactAttributes(attributes: ReadableSpan['attributes']): ReadableSpan['attributes'] {
  const out: ReadableSpan['attributes'] = {};
  for (const [key, value] of Object.entries(attributes)) out[key] = redactAttribute(key, value);
  return out;
}

function redactAttribute(key: string, value: ReadableSpan['attributes'][string]): ReadableSpan['attributes'][string] {
  if (Array.isArray(value)) return value.map((v) => (typeof v === 'string' ? redactText(v, { inbound: true }) : v)) as typeof value;
  if (typeof value !== 'string') return value;
  if (URL_ATTRIBUTES.has(key)) return redactText(redactUrl(value, { inbound: true }), { inbound: true });
  if (QUERY_ATTRIBUTES.has(key)) return redactUrl(`?${value}`, { inbound: true }).slice(1);
  return redactText(value, { inbound: true });
}
