import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { sealedAt } from '../auth/credential-cipher';
import { recordFilters } from '../tests/support/command-filters';
import type { WeftStack } from '../tests/support/weft-stack';
import { percentile, round1 } from './timing';

/** Requests timed per figure (one after the other, as a dashboard polls). */
const SAMPLES = 40;

/**
 * Temporal calls the stack's in-process API makes, by method, until stop(): every call of the
 * client's services (workflow, schedule, operator) goes through its connection's service stubs.
 */
function countTemporalCalls(client: Client): { calls(): Record<string, number>; stop(): void } {
  const counts: Record<string, number> = {};
  const services = [client.workflowService, client.connection.operatorService] as unknown as Array<Record<string, unknown>>;
  const restore: Array<() => void> = [];
  for (const service of services) {
    // The workflow service is a plain object of methods (the client's namespace-header wrapper); the operator service a protobufjs one.
    for (const name of new Set([...Object.keys(service), ...Object.keys(Object.getPrototypeOf(service) as object)])) {
      const own = Object.prototype.hasOwnProperty.call(service, name);
      const original = service[name];
      if (typeof original !== 'function' || name === 'constructor') continue;
      service[name] = (...args: unknown[]) => {
        counts[name] = (counts[name] ?? 0) + 1;
        return (original as (...a: unknown[]) => unknown).apply(service, args);
      };
      restore.push(() => {
        if (own) service[name] = original;
        else delete service[name];
      });
    }
  }
  return { calls: () => ({ ...counts }), stop: () => restore.forEach((r) => r()) };
}

export interface RequestFigure {
  p50_ms: number;
  p99_ms: number;
  /** Database commands per request (the stack's MongoClient, monitored). */
  db_commands_per_request: number;
  db_commands_by_kind: Record<string, number>;
  temporal_calls_per_request: number;
  temporal_calls_by_method: Record<string, number>;
  non_200: number;
}

/** `path` requested SAMPLES times one after the other through the stack's API: latency, and commands and Temporal calls per request. */
async function measureRequest(stack: WeftStack, path: string): Promise<RequestFigure> {
  // Warm: the first request of a route pays for its code and connections.
  await stack.api('GET', path);
  const ms: number[] = [];
  let non200 = 0;
  const db = recordFilters(stack.core.mongo);
  const temporal = countTemporalCalls(stack.temporal);
  try {
    for (let i = 0; i < SAMPLES; i++) {
      const start = performance.now();
      const res = await stack.api('GET', path);
      ms.push(performance.now() - start);
      if (res.status !== 200) non200++;
    }
  } finally {
    db.stop();
    temporal.stop();
  }
  const byKind: Record<string, number> = {};
  for (const c of db.commands) byKind[`${c.command} ${c.collection}`] = (byKind[`${c.command} ${c.collection}`] ?? 0) + 1;
  for (const k of Object.keys(byKind)) byKind[k] = round1(byKind[k] / SAMPLES);
  const calls = temporal.calls();
  return {
    p50_ms: percentile(ms, 50),
    p99_ms: percentile(ms, 99),
    db_commands_per_request: round1(db.commands.length / SAMPLES),
    db_commands_by_kind: byKind,
    temporal_calls_per_request: round1(Object.values(calls).reduce((a, b) => a + b, 0) / SAMPLES),
    temporal_calls_by_method: Object.fromEntries(Object.entries(calls).map(([k, v]) => [k, round1(v / SAMPLES)])),
    non_200: non200,
  };
}

/** The integration status and one connection's sync status, as an app's dashboard asks for them. */
export async function statusFigures(
  stack: WeftStack,
  integration: string,
  connectionId: string,
): Promise<{ status: RequestFigure; sync_status: RequestFigure }> {
  return {
    status: await measureRequest(stack, `/integrations/${encodeURIComponent(integration)}/status`),
    sync_status: await measureRequest(
      stack,
      `/sync/status?provider_config_key=${encodeURIComponent(integration)}&syncs=*&connection_id=${encodeURIComponent(connectionId)}`,
    ),
  };
}

/**
 * `count` more connections in another integration, each with its sync state, written through
 * the stores (not the API: no schedules, no runs), so that the database holds far more than
 * the integration measured: its figures should not move.
 */
export async function addIdleConnections(stack: WeftStack, integration: string, count: number): Promise<void> {
  const stores = stack.core.stores;
  const created = await stack.api('POST', '/integrations', {
    body: { unique_key: integration, provider: 'luma', provider_overrides: { base_url: stack.luma.url } },
  });
  if (created.status !== 201) throw new Error(`POST /integrations ${integration}: ${created.status} ${JSON.stringify(created.body)}`);
  const one = async (i: number) => {
    const _id = randomUUID();
    const connection = await stores.connections.create({
      _id,
      environment: 'dev',
      provider_config_key: integration,
      provider: 'luma',
      connection_id: `idle-${i}`,
      auth_mode: 'API_KEY',
      credentials_encrypted: stack.core.cipher.seal({ type: 'API_KEY', apiKey: `idle-key-${i}` }, sealedAt.connectionCredentials({ _id, environment: 'dev' })),
      connection_config: {},
      metadata: {},
      tags: {},
    });
    await stores.syncs.ensure({
      environment: 'dev',
      connection: connection._id,
      connection_id: connection.connection_id,
      provider_config_key: integration,
      name: 'list-events',
      variant: 'base',
    });
  };
  let next = 0;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (next < count) await one(next++);
    }),
  );
}
