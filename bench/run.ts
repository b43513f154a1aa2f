/**
 * `npm run bench`: figures measured side by side in one run, one JSON line each. Not part
 * of `npm test` (timings are not assertions). Starts its own Temporal dev server and
 * FerretDB (or uses TEMPORAL_ADDRESS / MONGODB_URI), like the test run.
 */
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { infraOptionsFromEnv } from '../scripts/infra/infra-env';
import { startInfrastructure } from '../scripts/infra/infrastructure';
import { bundleWorkflowsTo } from '../tests/support/bundle-workflows';
import { createLumaIntegration, startWeftStack } from '../tests/support/weft-stack';

async function lumaSync(events: number): Promise<void> {
  const stack = await startWeftStack({ luma: { seed: 1, eventCount: events } });
  try {
    await createLumaIntegration(stack);
    const started = process.hrtime.bigint();
    const res = await stack.api('POST', '/connections', { body: { provider_config_key: 'luma', connection_id: 'bench', credentials: { type: 'API_KEY', apiKey: 'sandbox-luma-api-key' } } });
    if (res.status !== 201) throw new Error(JSON.stringify(res.body));
    const first: any = await stack.waitForSync('bench', 'list-events');
    const firstMs = Number(process.hrtime.bigint() - started) / 1e6;

    const again = process.hrtime.bigint();
    await stack.api('POST', '/sync/trigger', { body: { provider_config_key: 'luma', connection_id: 'bench', syncs: ['list-events'] } });
    const second: any = await stack.waitForSync('bench', 'list-events');
    const secondMs = Number(process.hrtime.bigint() - again) / 1e6;

    // Raw insertMany of the same documents into the same database, for scale.
    const docs = (await stack.core.stores.db.collection('records').find({}, { projection: { _id: 0 } }).toArray()).map((d) => ({ ...d, id: `${d.id}-raw` }));
    const rawCol = stack.core.stores.db.collection('bench_raw_insert');
    const rawStart = process.hrtime.bigint();
    for (let i = 0; i < docs.length; i += 1000) await rawCol.insertMany(docs.slice(i, i + 1000), { ordered: false });
    const rawMs = Number(process.hrtime.bigint() - rawStart) / 1e6;

    const line = (o: object) => console.log(JSON.stringify(o));
    line({ figure: 'luma_initial_sync', events, ms: Math.round(firstMs), records_per_s: Math.round((events / firstMs) * 1000), result: first.result.CalendarEvent });
    line({ figure: 'luma_unchanged_resync', events, ms: Math.round(secondMs), fraction_of_initial: +(secondMs / firstMs).toFixed(3), result: second.result.CalendarEvent });
    line({ figure: 'raw_insertMany_same_docs', docs: docs.length, ms: Math.round(rawMs), sync_vs_raw_ratio: +(rawMs / firstMs).toFixed(3) });
  } finally {
    await stack.shutdown();
  }
}

async function main(): Promise<void> {
  const env = infraOptionsFromEnv();
  const infra = await startInfrastructure({ mode: 'test', repoRoot: path.resolve(__dirname, '..'), external: env.external, binaries: env.binaries, log: () => undefined });
  try {
    process.env.WEFT_TEST_TEMPORAL_ADDRESS = infra.temporal.address;
    process.env.WEFT_TEST_TEMPORAL_NAMESPACE = infra.temporal.namespace;
    process.env.WEFT_TEST_MONGODB_URI = infra.mongodbUri;
    const bundle = path.join(mkdtempSync(path.join(os.tmpdir(), 'weft-bench-')), 'workflows.js');
    await bundleWorkflowsTo(bundle);
    process.env.WEFT_TEST_WORKFLOW_BUNDLE = bundle;
    await lumaSync(Number(process.argv[2] ?? 10_000));
  } finally {
    await infra.stop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
