import type { Interceptor } from '@grpc/grpc-js';
import { Connection, defaultGrpcRetryOptions, makeGrpcRetryInterceptor, type ConnectionOptions, type GrpcRetryOptions } from '@temporalio/client';
import { toClientOptions } from '@temporalio/envconfig';
import type { NativeConnectionOptions } from '@temporalio/worker';
import { WeftError } from '../common/errors';
import { usesTls, type TemporalSettings } from '../common/temporal-settings';

/**
 * Calls that wait on purpose (a workflow's result, an update's outcome): the caller bounds
 * them itself with `connection.withDeadline`, as the action wait does.
 */
const LONG_POLLS = new Set(
  ['GetWorkflowExecutionHistory', 'PollWorkflowExecutionUpdate', 'UpdateWorkflowExecution'].map((m) => `/temporal.api.workflowservice.v1.WorkflowService/${m}`),
);

/**
 * Options for the Temporal client's Connection that give every call a deadline. Without one
 * the client's retry interceptor keeps retrying an unreachable server for about 20 s per
 * call (measured: 18.1 s), so an API request hung that long and then failed with 500. With
 * it a call gives up after `callTimeoutMs`, which the API answers as 503
 * orchestrator_unavailable. The retries (the SDK's own policy) stay, but they stop at the
 * deadline instead of sleeping past it; a deadline the caller set (`withDeadline`) is kept.
 * The gRPC channel reconnects by itself: calls succeed again as soon as the server is back.
 */
export function boundedTemporalCalls(callTimeoutMs: number): Pick<ConnectionOptions, 'interceptors'> {
  const defaults = defaultGrpcRetryOptions();
  const unbounded = makeGrpcRetryInterceptor(defaults);
  const deadlinePerCall: Interceptor = (options, nextCall) => {
    const explicit = options.deadline === undefined ? undefined : new Date(options.deadline).getTime();
    const deadline = explicit ?? (LONG_POLLS.has(options.method_definition.path) ? undefined : Date.now() + callTimeoutMs);
    if (deadline === undefined) return unbounded(options, nextCall);
    const withinDeadline: GrpcRetryOptions = {
      retryableDecider: (attempt, status) => Date.now() < deadline && defaults.retryableDecider(attempt, status),
      delayFunction: (attempt, status) => Math.max(0, Math.min(defaults.delayFunction(attempt, status), deadline - Date.now())),
    };
    return makeGrpcRetryInterceptor(withinDeadline)({ ...options, deadline }, nextCall);
  };
  // Replaces the client's default interceptor list (which is just the unbounded retry).
  return { interceptors: [deadlinePerCall] };
}

/**
 * What the client's Connection and the workers' NativeConnection need from the settings:
 * address, TLS (certificates read from their files now, so a rotated file is picked up by
 * the next process start), API key and gRPC metadata, through the SDK's own conversion.
 */
export function temporalConnectionOptions(settings: TemporalSettings): NativeConnectionOptions & { address: string } {
  if (!settings.address)
    throw new WeftError(
      'missing_temporal_address',
      'TEMPORAL_ADDRESS (or a Temporal profile with an address) is required: the Temporal server that runs syncs and actions.',
    );
  let options: NativeConnectionOptions;
  try {
    options = toClientOptions({ address: settings.address, apiKey: settings.apiKey, tls: settings.tls, grpcMeta: settings.grpcMeta }).connectionOptions;
  } catch (err) {
    // A certificate path that cannot be read: the message names the path, never the contents.
    throw new WeftError('temporal_config_invalid', `Temporal TLS settings of profile "${settings.profile}" could not be read: ${(err as Error).message}`);
  }
  return { ...options, address: settings.address };
}

/** How long a process start waits for Temporal before giving up with temporal_unreachable (a refused certificate fails sooner). */
const CONNECT_TIMEOUT_MS = 15_000;

/** What a refused TLS handshake or credential says; retrying cannot change it. */
const REFUSED = /certificate|handshake|alert|ssl|tls|unauthenticated|permission denied|api key/i;

/**
 * The API's client Connection: first one call with no retries, so that a handshake the server
 * refuses (a client certificate of another CA, none at all, an untrusted server) ends the start
 * at once with the TLS alert. The client's own connect would retry it for its whole timeout and
 * then say only "Failed to connect before the deadline". Anything else (the server still
 * starting) is left to the client's connect and its retries.
 */
export async function connectTemporalClient(settings: TemporalSettings, options: ConnectionOptions & { address: string }): Promise<Connection> {
  return connectOrExplain(settings, async () => {
    const probe = Connection.lazy({ ...options, interceptors: [] });
    try {
      await probe.withDeadline(Date.now() + CONNECT_TIMEOUT_MS, () => probe.workflowService.getSystemInfo({}));
    } catch (err) {
      if (REFUSED.test(causeOf(err))) throw err;
    } finally {
      await probe.close().catch(() => undefined);
    }
    return Connection.connect({ ...options, connectTimeout: CONNECT_TIMEOUT_MS });
  });
}

/**
 * Connects, or fails with `temporal_unreachable` naming the address, the namespace and the
 * cause, so a wrong certificate or address stops a process at start with one clear line
 * instead of a driver stack or a hang.
 */
export async function connectOrExplain<T>(settings: TemporalSettings, connect: () => Promise<T>): Promise<T> {
  try {
    return await connect();
  } catch (err) {
    if (err instanceof WeftError) throw err;
    throw new WeftError(
      'temporal_unreachable',
      `Could not connect to Temporal at ${settings.address} (namespace ${settings.namespace}${describeSecurity(settings)}): ${causeOf(err)}`,
      503,
    );
  }
}

function describeSecurity(settings: TemporalSettings): string {
  if (!usesTls(settings)) return ', plain TCP';
  const parts = ['TLS'];
  if (settings.tls?.clientCert) parts.push('client certificate');
  if (settings.apiKey) parts.push('API key');
  return `, ${parts.join(' + ')}`;
}

/** The driver's reason in one line (gRPC and the Rust core nest it; the innermost says most). */
function causeOf(err: unknown): string {
  const messages: string[] = [];
  for (let e: unknown = err; e instanceof Error && messages.length < 4; e = (e as { cause?: unknown }).cause) messages.push(e.message);
  return messages.join(': ').replace(/\s+/g, ' ').trim() || String(err);
}
