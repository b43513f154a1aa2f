import { Router } from 'express';
import type { ConnectionDoc } from '../../store/connections';
import type { ApiDeps } from '../deps';
import { environmentOf } from '../middleware/auth';
import { parseInput } from '../validate';
import { syncStatusQuery, triggerSyncBody } from '../schemas/syncs';
import { findConnection, findIntegration } from '../services/connection-lookup';
import { ensureSyncStates, isSyncRunning, selectSyncs, startSyncRun } from '../services/sync-control';

export function syncRouter(deps: ApiDeps): Router {
  const router = Router();

  /** The connections a sync request is about: one, or all of the integration's. */
  async function targetConnections(env: string, providerConfigKey: string, connectionId?: string): Promise<ConnectionDoc[]> {
    if (connectionId) return [(await findConnection(deps.stores, env, providerConfigKey, connectionId)).connection];
    await findIntegration(deps.stores, env, providerConfigKey);
    return deps.stores.connections.listForIntegration(env, providerConfigKey);
  }

  router.post('/trigger', async (req, res) => {
    const env = environmentOf(res);
    const body = parseInput(triggerSyncBody, req.body, 'invalid_body');
    const integration = await findIntegration(deps.stores, env, body.provider_config_key);
    const selected = selectSyncs(deps, integration.provider, body.syncs);
    const connections = await targetConnections(env, body.provider_config_key, body.connection_id);
    for (const connection of connections) {
      await ensureSyncStates(deps, connection);
      for (const sel of selected) {
        if (body.opts?.reset) {
          await deps.stores.syncs.reset({ connection: connection._id, name: sel.name, variant: sel.variant });
          if (body.opts.emptyCache) {
            const models = Object.keys(deps.registry.getSync(connection.provider, sel.name)?.models ?? {});
            for (const model of models) await deps.stores.records.deleteScope({ environment: env, connection: connection._id, model, variant: sel.variant });
          }
        }
        await startSyncRun(deps, connection, sel);
      }
    }
    res.json({ success: true });
  });

  router.get('/status', async (req, res) => {
    const env = environmentOf(res);
    const q = parseInput(syncStatusQuery, req.query, 'invalid_query_params');
    const integration = await findIntegration(deps.stores, env, q.provider_config_key);
    const names =
      q.syncs === '*'
        ? []
        : q.syncs
            .split(',')
            .map((s) => s.trim())
            .filter(Boolean);
    const selected = selectSyncs(deps, integration.provider, names);
    const connections = await targetConnections(env, q.provider_config_key, q.connection_id);
    const out = [];
    for (const connection of connections) {
      const states = await deps.stores.syncs.listForConnection(connection._id);
      for (const state of states) {
        if (!selected.some((s) => s.name === state.name && s.variant === state.variant)) continue;
        const def = deps.registry.getSync(connection.provider, state.name);
        const running = await isSyncRunning(deps, connection, { name: state.name, variant: state.variant });
        const status = running ? 'RUNNING' : state.last_run?.status === 'SUCCESS' ? 'SUCCESS' : state.last_run?.status === 'ERROR' ? 'ERROR' : 'STOPPED';
        out.push({
          id: state._id,
          connection_id: connection.connection_id,
          name: state.name,
          variant: state.variant,
          status,
          type: def?.syncType === 'incremental' ? 'INCREMENTAL' : 'FULL',
          finishedAt: state.last_run?.finished_at?.toISOString() ?? null,
          nextScheduledSyncAt: null,
          frequency: state.frequency ?? def?.frequency ?? null,
          latestResult: state.last_run?.result ?? null,
          latestExecutionStatus: state.last_run?.status ?? null,
          latestError: state.last_run?.error ?? null,
          recordCount: state.record_count,
          checkpoint: await deps.stores.syncs.getCheckpoint({ connection: state.connection, name: state.name, variant: state.variant }),
        });
      }
    }
    res.json({ syncs: out });
  });

  return router;
}
