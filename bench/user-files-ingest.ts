import { randomBytes } from 'node:crypto';
import type { Document } from 'mongodb';
import { connectOneDrive, createOneDriveIntegration, runSync, startWeftStack } from '../tests/support/weft-stack';
import type { Figure } from './figure';
import type { SyncedDrive } from './read-figures';
import { spawnWorkerProcess, type WorkerKind } from './worker-process';

/** Far above what the read figures send, so the API's rate limit is counted but never refuses. */
const BENCH_API_RATE_LIMIT = { limit: 10_000_000, windowMs: 60_000 };
/**
 * How long a fresh worker sits polling before its idle RSS is read. V8's memory reducer
 * collects start-up garbage and shrinks the heap only once allocation has been low for a
 * while: sampled every 5 s, an idle worker's RSS falls for about 25 s (tsx 272 -> 214 MB,
 * compiled 222 -> 164 MB) and then stays flat.
 */
const IDLE_SETTLE_MS = 30_000;
/** Memory targets in MB: idle and peak RSS of a compiled worker; the tsx worker keeps its earlier, higher ceiling. */
const MEMORY_TARGETS = { compiled: { idle: 150, peak: 250 }, tsx: { idle: Infinity, peak: 400 } };

/**
 * A `user-files` sync of one big drive from the Graph simulator, in a worker process of
 * its own; then a second run after 1% of the files changed; then raw `insertMany` of the
 * very documents the sync wrote, into the same database, for scale. `ingest: false` skips
 * the second run and the raw inserts; `then` measures more on the synced drive before the
 * stack stops (the read figures). `worker` says which worker process syncs (tsx by default);
 * its idle RSS (before the sync) and peak RSS (the first sync) are the memory figure.
 */
export async function userFilesIngest(
  files: number,
  emit: (figure: Figure) => void,
  opts: { ingest?: boolean; worker?: WorkerKind; then?: (drive: SyncedDrive, emit: (figure: Figure) => void) => Promise<void> } = {},
): Promise<void> {
  // The test stack checks every answer against the OpenAPI document in this process (about
  // as much CPU as the API's own work on a page of 100 records): the figures time the API.
  const check = process.env.WEFT_OPENAPI_CHECK;
  process.env.WEFT_OPENAPI_CHECK = '0';
  const stack = await startWeftStack({
    worker: false,
    graph: { seed: 2, drives: [{ fileCount: files }] },
    apiRateLimit: BENCH_API_RATE_LIMIT,
    monitorCommands: true,
  }).finally(() => {
    if (check === undefined) delete process.env.WEFT_OPENAPI_CHECK;
    else process.env.WEFT_OPENAPI_CHECK = check;
  });
  const worker = await spawnWorkerProcess(stack, opts.worker);
  try {
    await new Promise((r) => setTimeout(r, IDLE_SETTLE_MS));
    const idleRssMb = worker.rssMb();
    await createOneDriveIntegration(stack);
    const records = stack.core.stores.db.collection('records');
    // Unique per run: workflow IDs derive from the connection id, and Temporal may be shared.
    const connectionId = `bench-${randomBytes(4).toString('hex')}`;

    // The connection's first run starts by itself; time it from the connection request.
    const t0 = process.hrtime.bigint();
    const created = await connectOneDrive(stack, connectionId);
    if (created.status !== 201) throw new Error(JSON.stringify(created.body));
    const first = (await stack.waitForSync(connectionId, 'user-files', { providerConfigKey: 'one-drive' })) as any;
    const firstMs = ms(t0);
    const peakRssMb = worker.peakRssMb();
    const target = MEMORY_TARGETS[worker.kind];
    emit({
      figure: 'memory',
      worker: worker.kind,
      idle_rss_mb: idleRssMb,
      peak_rss_mb: peakRssMb,
      during: `${files}-file user-files sync`,
      target: target.idle === Infinity ? `peak < ${target.peak}` : `idle <= ${target.idle}, peak <= ${target.peak}`,
      pass: idleRssMb <= target.idle && peakRssMb <= target.peak,
    });
    const stored = await records.countDocuments({ model: 'File' });
    const drive: SyncedDrive = { stack, connectionId, providerConfigKey: 'one-drive' };
    const measureMore = async () => opts.then?.(drive, emit);
    if (opts.ingest === false) return await measureMore();

    const before = await hashesById(stack);
    const edited = stack.graph.editFiles(Math.round(files / 100));
    const t1 = process.hrtime.bigint();
    const second = await runSync(stack, 'one-drive', connectionId, 'user-files');
    const secondMs = ms(t1);
    const after = await hashesById(stack);
    const changed = [...after].filter(([id, hash]) => before.get(id) !== hash).length + [...before.keys()].filter((id) => !after.has(id)).length;
    const written = await records.countDocuments({ model: 'File', run_id: second.runId });

    const raw = await rawInsert(stack);
    const syncRate = (stored / firstMs) * 1000;
    const rawRate = (raw.documents / raw.ms) * 1000;
    const rawDocumentRate = (raw.documents / raw.documentLayoutMs) * 1000;
    for (const figure of [
      {
        figure: 'ingest',
        files,
        records: stored,
        ms: Math.round(firstMs),
        records_per_s: Math.round(syncRate),
        raw_insertMany_records_per_s: Math.round(rawRate),
        ratio_to_raw: round(syncRate / rawRate),
        // The same records with the payload as a document (as an app inserting the files would, and as Weft stored them before).
        raw_insertMany_payload_documents_per_s: Math.round(rawDocumentRate),
        ratio_to_raw_payload_documents: round(syncRate / rawDocumentRate),
        target: '>= 0.8',
        pass: syncRate / rawRate >= 0.8,
        result: first.result.File,
      },
      {
        figure: 'incremental',
        files_edited: edited.length,
        ms: Math.round(secondMs),
        fraction_of_first_run: round(secondMs / firstMs),
        target: '<= 0.05',
        pass: secondMs / firstMs <= 0.05,
        documents_written: written,
        records_changed: changed,
        written_equals_changes: written === changed,
        result: second.result.File,
      },
    ])
      emit(figure);
    await measureMore();
  } finally {
    await worker.stop();
    await stack.shutdown();
  }
}

/**
 * The same documents, raw: insertMany in batches of 1,000 into a fresh collection (dropped
 * after, out of the way of the read figures); then again with each payload as a document
 * instead of its JSON string.
 */
async function rawInsert(stack: Awaited<ReturnType<typeof startWeftStack>>): Promise<{ documents: number; ms: number; documentLayoutMs: number }> {
  const docs = await stack.core.stores.db
    .collection('records')
    .find({ model: 'File' }, { projection: { _id: 0 } })
    .toArray();
  const insertAll = async (all: Document[]) => {
    const raw = stack.core.stores.db.collection('bench_raw_insert');
    const t = process.hrtime.bigint();
    for (let i = 0; i < all.length; i += 1000) await raw.insertMany(all.slice(i, i + 1000), { ordered: false });
    const took = ms(t);
    await raw.drop();
    return took;
  };
  const rawMs = await insertAll(docs);
  const documentLayoutMs = await insertAll(
    docs.map(({ data_json: json, ...rest }) => (typeof json === 'string' ? { ...rest, data: JSON.parse(json) as Document } : rest)),
  );
  return { documents: docs.length, ms: rawMs, documentLayoutMs };
}

async function hashesById(stack: Awaited<ReturnType<typeof startWeftStack>>): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const cursor = stack.core.stores.db.collection('records').find({ model: 'File', deleted_at: null }, { projection: { id: 1, hash: 1 } });
  for await (const doc of cursor) out.set(doc.id as string, doc.hash as string);
  return out;
}

function ms(start: bigint): number {
  return Number(process.hrtime.bigint() - start) / 1e6;
}

function round(x: number): number {
  return Math.round(x * 1000) / 1000;
}
