import { lazyInstruments } from '../common/telemetry';
import { scopeMetricAttributes } from '../common/telemetry-scope';

/** Sync-run metrics on the global OpenTelemetry API (no-ops unless app/telemetry.ts started the SDK). */
const instruments = lazyInstruments('weft.sync', (meter) => ({
  runs: meter.createCounter('weft.sync.runs', { description: 'Sync runs ended, by outcome' }),
  duration: meter.createHistogram('weft.sync.run.duration', { unit: 'ms', description: 'From a run start to its end' }),
  records: meter.createCounter('weft.sync.records', { description: 'Records a run changed, by change (added, updated, deleted)' }),
}));

export function recordSyncRunEnd(run: {
  provider: string;
  syncName: string;
  outcome: 'success' | 'error';
  startedAt: string | Date;
  changes?: Record<string, { added: number; updated: number; deleted: number }>;
}): void {
  const { runs, duration, records } = instruments();
  // The activity's scope adds the environment and the integration (never the connection).
  const scope = scopeMetricAttributes();
  const attrs = { ...scope, 'weft.provider': run.provider, 'weft.sync': run.syncName, 'weft.outcome': run.outcome };
  runs.add(1, attrs);
  duration.record(Date.now() - new Date(run.startedAt).getTime(), attrs);
  for (const [model, c] of Object.entries(run.changes ?? {})) {
    for (const change of ['added', 'updated', 'deleted'] as const) {
      if (c[change] > 0)
        records.add(c[change], { ...scope, 'weft.provider': run.provider, 'weft.sync': run.syncName, 'weft.model': model, 'weft.change': change });
    }
  }
}
