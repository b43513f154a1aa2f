import type { PayloadCodec } from '@temporalio/common';
import { Worker, type NativeConnection, type WorkerOptions } from '@temporalio/worker';
import {
  makeWorkflowExporter,
  OpenTelemetryActivityInboundInterceptor,
  OpenTelemetryActivityOutboundInterceptor,
  OpenTelemetryWorkflowClientInterceptor,
} from '@temporalio/interceptors-opentelemetry';
import type { Telemetry } from '../telemetry';
import { activityScopeInterceptor } from '../telemetry-activity-scope';

export interface WeftWorkerOptions {
  connection: NativeConnection;
  namespace: string;
  taskQueue: string;
  activities: object;
  /**
   * Encrypts what the worker writes (activity results, workflow commands' arguments) and
   * decrypts what it reads: the core's (auth/payload-codec.ts). Required, so no worker writes
   * plaintext. It runs in the worker's main thread, not in the workflow sandbox: the bundle
   * does not change.
   */
  payloadCodec: PayloadCodec;
  /** Whether it runs workflows too (each workflow-running worker has a V8 isolate of its own: ~30 MB). */
  workflows: boolean;
  /** A prebuilt bundle (tests bundle once and share it); otherwise workflows/ is bundled now. */
  workflowBundle?: { code: string };
  maxConcurrentActivityTaskExecutions?: number;
  /** With traces on: activity spans (children of the workflow's context from their headers) and workflow spans through the `exporter` sink. */
  telemetry?: Telemetry | null;
}

/** One Temporal worker on one task queue; with `workflows`, all of Weft's workflow types are registered on it. */
export async function createWeftWorker(opts: WeftWorkerOptions): Promise<Worker> {
  const workflowSource: Pick<WorkerOptions, 'workflowBundle' | 'workflowsPath'> = !opts.workflows
    ? {}
    : opts.workflowBundle
      ? { workflowBundle: opts.workflowBundle }
      : { workflowsPath: require.resolve('../../workflows') };
  return Worker.create({
    connection: opts.connection,
    namespace: opts.namespace,
    taskQueue: opts.taskQueue,
    activities: opts.activities,
    dataConverter: { payloadCodecs: [opts.payloadCodec] },
    ...workflowSource,
    ...tracing(opts.telemetry, !opts.workflowBundle),
    maxConcurrentActivityTaskExecutions: opts.maxConcurrentActivityTaskExecutions ?? 20,
  });
}

/**
 * The Temporal OpenTelemetry interceptors and workflow-span sink. The workflow side lives in
 * the bundle (the interceptors module, listed here for a bundle made at start; `npm run
 * build` writes a prebuilt bundle with it, workflow-bundle-otel.js). With traces off, a
 * prebuilt bundle made with it (WEFT_WORKFLOW_BUNDLE) hands its workflow spans to a sink that
 * drops them (an unregistered sink is an error logged per call).
 */
function tracing(telemetry: Telemetry | null | undefined, bundlingNow: boolean): Pick<WorkerOptions, 'interceptors' | 'sinks'> {
  // Metrics alone: no spans, but the points recorded in an activity get its scope.
  const scopeOnly = telemetry ? { interceptors: { activity: [activityScopeInterceptor] } } : {};
  if (!telemetry?.spanProcessor) return bundlingNow ? scopeOnly : { ...scopeOnly, sinks: { exporter: { export: { fn: () => undefined } } } };
  return {
    interceptors: {
      client: { workflow: [new OpenTelemetryWorkflowClientInterceptor()] },
      ...(bundlingNow && { workflowModules: [require.resolve('@temporalio/interceptors-opentelemetry/lib/workflow-interceptors')] }),
      activity: [
        (ctx) => ({ inbound: new OpenTelemetryActivityInboundInterceptor(ctx), outbound: new OpenTelemetryActivityOutboundInterceptor(ctx) }),
        // Inside the activity's span: it and everything recorded in the activity get the scope.
        activityScopeInterceptor,
      ],
    },
    sinks: { exporter: makeWorkflowExporter(telemetry.spanProcessor, telemetry.resource) },
  };
}
