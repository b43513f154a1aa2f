/**
 * OpenTelemetry for one Weft process (`weft api`, `weft worker`, `npm start`): traces and
 * metrics over OTLP/HTTP (protobuf, or JSON by OTEL_EXPORTER_OTLP_PROTOCOL), configured by the standard OTEL_* variables as common/config.ts
 * parsed them; off (nothing started, nothing patched) unless an OTLP endpoint is set.
 *
 * Built from the providers rather than @opentelemetry/sdk-node's NodeSDK, which reads
 * process.env on its own: here the parsed Config is the only source. http/https are patched
 * even when already loaded; the mongodb driver as it loads, which is why every process entry
 * imports app/telemetry-preload.ts before anything else.
 */
import http from 'node:http';
import https from 'node:https';
import { metrics } from '@opentelemetry/api';
import { OTLPMetricExporter as OTLPJsonMetricExporter } from '@opentelemetry/exporter-metrics-otlp-http';
import { OTLPMetricExporter as OTLPProtoMetricExporter } from '@opentelemetry/exporter-metrics-otlp-proto';
import { OTLPTraceExporter as OTLPJsonTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as OTLPProtoTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { registerInstrumentations } from '@opentelemetry/instrumentation';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { MongoDBInstrumentation } from '@opentelemetry/instrumentation-mongodb';
import { envDetectorSync, Resource } from '@opentelemetry/resources';
import { MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { BatchSpanProcessor, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
import type { TelemetryOptions } from '@temporalio/worker';
import type { Config } from '../common/config';
import { requestScopeSpanAttributes, setWeftScopesEnabled } from '../common/telemetry-scope';
import { RedactingSpanProcessor } from './telemetry-redaction';

export interface Telemetry {
  /** Where the Temporal interceptors send workflow spans (null: traces off); it redacts every span's secrets before export. */
  spanProcessor: SpanProcessor | null;
  resource: Resource;
  /** Exports what is buffered, then stops; safe to call twice. */
  shutdown(): Promise<void>;
}

type TelemetryConfig = Pick<
  Config,
  | 'OTEL_SDK_DISABLED'
  | 'OTEL_SERVICE_NAME'
  | 'OTEL_EXPORTER_OTLP_ENDPOINT'
  | 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT'
  | 'OTEL_EXPORTER_OTLP_METRICS_ENDPOINT'
  | 'OTEL_EXPORTER_OTLP_PROTOCOL'
  | 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL'
  | 'OTEL_EXPORTER_OTLP_METRICS_PROTOCOL'
  | 'OTEL_TRACES_EXPORTER'
  | 'OTEL_METRICS_EXPORTER'
  | 'OTEL_METRIC_EXPORT_INTERVAL'
>;

/** Made once per process: by the preload before the driver loads (its require hook then patches it), else by startTelemetry. */
let mongoDbInstrumentation: MongoDBInstrumentation | null = null;

/**
 * When OTEL_* turns traces on, installs the MongoDB instrumentation's require hook now, so the
 * driver is patched when something first requires it (app/telemetry-preload.ts calls this
 * before anything does). Its spans go through the global tracer API: nowhere until
 * startTelemetry registers the tracer provider. Only operations under a span (an API request,
 * an activity) get one; background polling does not.
 */
export function instrumentMongoDbOnLoad(config: TelemetryConfig): void {
  if (!telemetryEndpoints(config).traces) return;
  mongoDbInstrumentation ??= new MongoDBInstrumentation({ requireParentSpan: true });
}

/** The OTLP/HTTP URL of one signal: its own variable as it is, or the base endpoint + /v1/<signal>, as every OpenTelemetry SDK builds it. */
function signalUrl(base: string | undefined, own: string | undefined, signal: 'traces' | 'metrics'): string | undefined {
  if (own) return own;
  if (!base) return undefined;
  return `${base.replace(/\/+$/, '')}/v1/${signal}`;
}

function telemetryEndpoints(config: TelemetryConfig): { traces?: string; metrics?: string } {
  if (config.OTEL_SDK_DISABLED) return {};
  return {
    traces:
      config.OTEL_TRACES_EXPORTER === 'none' ? undefined : signalUrl(config.OTEL_EXPORTER_OTLP_ENDPOINT, config.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, 'traces'),
    metrics:
      config.OTEL_METRICS_EXPORTER === 'none'
        ? undefined
        : signalUrl(config.OTEL_EXPORTER_OTLP_ENDPOINT, config.OTEL_EXPORTER_OTLP_METRICS_ENDPOINT, 'metrics'),
  };
}

/** Starts the process's telemetry; null when OTEL_* configures none. `serviceName` is the default of OTEL_SERVICE_NAME. */
export function startTelemetry(config: TelemetryConfig, serviceName: string): Telemetry | null {
  const urls = telemetryEndpoints(config);
  if (!urls.traces && !urls.metrics) return null;
  // OTEL_RESOURCE_ATTRIBUTES (and OTEL_SERVICE_NAME, which wins) as the OTel env detector reads them from the process's environment.
  const resource = new Resource({ [ATTR_SERVICE_NAME]: config.OTEL_SERVICE_NAME ?? serviceName }).merge(envDetectorSync.detect());
  const stops: Array<() => Promise<void>> = [];

  let meterProvider: MeterProvider | undefined;
  if (urls.metrics) {
    const url = urls.metrics;
    const exporter =
      (config.OTEL_EXPORTER_OTLP_METRICS_PROTOCOL ?? config.OTEL_EXPORTER_OTLP_PROTOCOL) === 'http/json'
        ? new OTLPJsonMetricExporter({ url })
        : new OTLPProtoMetricExporter({ url });
    const provider = new MeterProvider({
      resource,
      readers: [new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: config.OTEL_METRIC_EXPORT_INTERVAL })],
    });
    metrics.setGlobalMeterProvider(provider);
    // First in, last stopped (in reverse below): the instrumentations record into it until then.
    stops.push(() => provider.shutdown());
    meterProvider = provider;
  }

  let spanProcessor: SpanProcessor | null = null;
  if (urls.traces) {
    const url = urls.traces;
    const exporter =
      (config.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? config.OTEL_EXPORTER_OTLP_PROTOCOL) === 'http/json'
        ? new OTLPJsonTraceExporter({ url })
        : new OTLPProtoTraceExporter({ url });
    // Every span is redacted before it is queued for export (app/telemetry-redaction.ts), Temporal's workflow spans too.
    spanProcessor = new RedactingSpanProcessor(new BatchSpanProcessor(exporter));
    const tracerProvider = new NodeTracerProvider({ resource, spanProcessors: [spanProcessor] });
    // Also installs the AsyncLocalStorage context manager and the W3C propagator.
    tracerProvider.register();
    stops.push(() => tracerProvider.shutdown());
    const disable = registerInstrumentations({
      tracerProvider,
      // The http instrumentation's own metrics (http.server.duration, by route) too, when metrics are on.
      meterProvider,
      // No express instrumentation: the 1.x generation's (0.47) patches Express 4 only, and Weft runs Express 5.
      instrumentations: [
        patchingLoadedCoreModules(
          // An API request's span gets its scope (api/middleware/request-scope.ts) as it ends.
          new HttpInstrumentation({ applyCustomAttributesOnSpan: (span, request) => span.setAttributes(requestScopeSpanAttributes(request)) }),
        ),
        (mongoDbInstrumentation ??= new MongoDBInstrumentation({ requireParentSpan: true })),
      ],
    });
    stops.push(async () => disable());
  }

  // API requests run in their scope (api/middleware/request-scope.ts) while telemetry runs.
  setWeftScopesEnabled(true);
  stops.push(async () => setWeftScopesEnabled(false));

  let stopped: Promise<void> | null = null;
  return {
    spanProcessor,
    resource,
    shutdown() {
      stopped ??= (async () => {
        for (const stop of stops.reverse()) await stop().catch(() => undefined);
      })();
      return stopped;
    },
  };
}

/**
 * The http instrumentation patches `http`/`https` when they are next required; a process
 * that loaded them already (every entry point imports its server first; jest hands its own
 * `module` to require hooks) would get no API request spans. Patch the loaded core modules
 * now, once: a later require hook finds them patched and leaves them.
 */
function patchingLoadedCoreModules(instrumentation: HttpInstrumentation): HttpInstrumentation {
  const loaded: Record<string, unknown> = { http, https };
  for (const def of instrumentation.getModuleDefinitions()) {
    const { patch, unpatch } = def;
    const exports = loaded[def.name];
    if (!patch || !unpatch || !exports) continue;
    let patched = false;
    def.patch = (moduleExports, version) => {
      if (patched) return moduleExports;
      patched = true;
      return patch(moduleExports, version);
    };
    def.unpatch = (moduleExports, version) => {
      if (!patched) return;
      patched = false;
      unpatch(moduleExports, version);
    };
    def.moduleExports = exports;
    def.patch(exports);
  }
  return instrumentation;
}

/**
 * The Temporal worker's own metrics (its Rust core: task latencies, pollers, slots), for
 * Runtime.install: OTLP/HTTP to the same metrics endpoint. Undefined when metrics are off.
 * Runtime.install runs once per process, before any worker or connection exists.
 */
export function temporalRuntimeTelemetry(config: TelemetryConfig): TelemetryOptions | undefined {
  const url = telemetryEndpoints(config).metrics;
  if (!url) return undefined;
  return { metrics: { otel: { url, http: true, metricsExportInterval: config.OTEL_METRIC_EXPORT_INTERVAL } } };
}
