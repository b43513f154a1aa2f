import { RecordStore } from '../../store/records';
import { useTestDatabase } from '../support/test-database';

/** An action's save to the records cache (RecordStore.saveNow) beside the sync runs of the scope, on the real MongoDB-wire server. */
describe('RecordStore.saveNow (an action saves what it wrote)', () => {
  const testDb = useTestDatabase('weft_action_saves');
  const rec = (id: string, extra: Record<string, unknown> = {}) => ({ id, data: { id, ...extra } });
  const ids = async (store: RecordStore, scope: Parameters<RecordStore['list']>[0]) =>
    (await store.list(scope, { limit: 100 })).records
      .map((r) => `${r.id}:${String((r.data as { v?: unknown }).v)}:${r.deleted_at ? 'deleted' : 'live'}`)
      .sort();

  test('visible at once; the next run finds it unchanged, counts neither added nor updated, and the live count stays exact', async () => {
    const store = new RecordStore(testDb.db());
    await store.ensureIndexes();
    const scope = { environment: 'dev', connection: 'c-act', model: 'PullRequest', variant: 'base' };

    const run1 = await store.openWriter(scope, 'run-1');
    await run1.saveBatch([rec('a', { v: 1 }), rec('b', { v: 1 })]);
    expect(await store.finishScope(scope, 'run-1', true)).toEqual({ added: 2, updated: 0, deleted: 0, live: 2 });

    // The action updates b and creates c at the provider, and saves both.
    expect(await store.saveNow(scope, 'action:wf-1:1:1', [rec('b', { v: 2 }), rec('c', { v: 1 })])).toEqual({ added: 1, updated: 1, unchanged: 0 });
    expect(await ids(store, scope)).toEqual(['a:1:live', 'b:2:live', 'c:1:live']);
    // Its batch log is gone (no finish will read it).
    expect(await testDb.db().collection('record_run_batches').countDocuments({ run_id: 'action:wf-1:1:1' })).toBe(0);

    // The next (full) run lists what the provider now has: nothing changed for it.
    const run2 = await store.openWriter(scope, 'run-2');
    expect(await run2.saveBatch([rec('a', { v: 1 }), rec('b', { v: 2 }), rec('c', { v: 1 })])).toEqual({ added: 0, updated: 0, unchanged: 3 });
    expect(await store.finishScope(scope, 'run-2', true)).toEqual({ added: 0, updated: 0, deleted: 0, live: 3 });

    // Incremental runs carry the live count: it is recounted once after an action's save, not carried stale.
    await store.saveNow(scope, 'action:wf-2:1:1', [rec('d', { v: 1 })]);
    const run3 = await store.openWriter(scope, 'run-3');
    expect(await run3.saveBatch([rec('d', { v: 1 })])).toEqual({ added: 0, updated: 0, unchanged: 1 });
    expect(await store.finishScope(scope, 'run-3', false)).toEqual({ added: 0, updated: 0, deleted: 0, live: 4 });
  });

  test('beside a sync run in progress: its reserved seqs are not exposed unwritten, and a full run that began before the save does not delete it', async () => {
    const store = new RecordStore(testDb.db());
    const scope = { environment: 'dev', connection: 'c-race', model: 'CalendarEvent', variant: 'base' };
    const first = await store.openWriter(scope, 'run-1');
    await first.saveBatch([rec('e1', { v: 1 }), rec('e2', { v: 1 })]);
    await store.finishScope(scope, 'run-1', true);

    // A full run begins writing (its listing was read before the action created e3).
    const run2 = await store.openWriter(scope, 'run-2');
    await run2.saveBatch([rec('e1', { v: 1 })]);

    // A sync batch reserves seqs and has not committed them yet when the action saves: the
    // action's commit waits for them instead of moving the committed mark past unwritten seqs.
    const committedBefore = await store.committedSeq(scope);
    const reserved = await store.counters.reserveSeq(scope, 1, undefined, new Date());
    let actionDone = false;
    const action = store.saveNow(scope, 'action:wf-3:1:1', [rec('e3', { v: 1 })]).then(() => (actionDone = true));
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(actionDone).toBe(false);
    expect(await store.committedSeq(scope)).toBe(committedBefore);
    await store.counters.commitSeq(scope, reserved.first);
    await action;
    expect(await store.committedSeq(scope)).toBeGreaterThan(reserved.first);
    // While the action's hold is placed, a sync commit past the action's seqs is not read past them.
    const holdScope = { ...scope, connection: 'c-hold' };
    await (await store.openWriter(holdScope, 'run-h')).saveBatch([rec('x', { v: 1 })]);
    await store.counters.placeHold(holdScope, 'h-test');
    const syncRange = await store.counters.reserveSeq(holdScope, 3, undefined, new Date());
    await store.counters.commitSeq(holdScope, syncRange.first + 2);
    expect(await store.committedSeq(holdScope)).toBe(syncRange.first - 1);
    await store.counters.commitHeld(holdScope, 'h-test', syncRange.first, syncRange.first);
    expect(await store.committedSeq(holdScope)).toBe(syncRange.first + 2);

    // The full run ends without having listed e3: e3 stays (it was saved after the run began).
    await run2.saveBatch([rec('e2', { v: 1 })]);
    expect(await store.finishScope(scope, 'run-2', true)).toEqual({ added: 0, updated: 0, deleted: 0, live: 3 });
    expect(await ids(store, scope)).toEqual(['e1:1:live', 'e2:1:live', 'e3:1:live']);
    // The next full run that does not list e3 deletes it as usual.
    const run3 = await store.openWriter(scope, 'run-3');
    await run3.saveBatch([rec('e1', { v: 1 }), rec('e2', { v: 1 })]);
    expect(await store.finishScope(scope, 'run-3', true)).toEqual({ added: 0, updated: 0, deleted: 1, live: 2 });
  });
});
