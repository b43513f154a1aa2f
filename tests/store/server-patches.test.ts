import { ObjectId, type Collection } from 'mongodb';
import { useTestDatabase } from '../support/test-database';

/**
 * What the records engine relies on from the MongoDB-wire server, and what Weft's FerretDB
 * build patches (scripts/infra/binaries.ts) must keep true: `_id` `$in` reads and deletes
 * and `_id` range reads answer exactly as MongoDB does, an update command of hundreds of
 * statements ends, and concurrent updates of one document never undo each other.
 * (Their speed is measured by `npm run bench`.)
 */
describe('the MongoDB-wire server', () => {
  let col: Collection<{ _id: string | number; n: number; tag?: string }>;
  const testDb = useTestDatabase('weft_server');

  beforeAll(async () => {
    col = testDb.db().collection('docs');
    await col.insertMany([...Array.from({ length: 400 }, (_, n) => ({ _id: `d${n}`, n })), { _id: 7, n: -7 }]);
  });

  test('find by _id $in returns exactly the listed documents, whatever the types', async () => {
    const found = await col.find({ _id: { $in: ['d3', 'd399', 'missing', 'd3'] } }).toArray();
    expect(found.map((d) => d._id).sort()).toEqual(['d3', 'd399']);
    // Mixed types are not pushed down but must still match.
    const mixed = await col.find({ _id: { $in: ['d5', 7] } }).toArray();
    expect(mixed.map((d) => d.n).sort((a, b) => a - b)).toEqual([-7, 5]);
    // $in beside another condition on the same document.
    expect(await col.countDocuments({ _id: { $in: ['d1', 'd2', 'd3'] }, n: { $gte: 2 } })).toBe(2);
  });

  test('an update command of 300 statements completes', async () => {
    const ops = Array.from({ length: 300 }, (_, n) => ({ updateOne: { filter: { _id: `d${n}` }, update: { $set: { tag: 'bulk' } } } }));
    const hang = new Promise((_, reject) => setTimeout(() => reject(new Error('update command hung')), 30_000).unref());
    const res = (await Promise.race([col.bulkWrite(ops, { ordered: false }), hang])) as { modifiedCount: number };
    expect(res.modifiedCount).toBe(300);
    expect(await col.countDocuments({ tag: 'bulk' })).toBe(300);
  });

  test('concurrent updates of one document all take effect (single-document atomicity)', async () => {
    // Each update changes its own field of one shared document; none may undo another's.
    const shared = testDb.db().collection<{ _id: string; n?: number; f?: Record<string, number> }>('shared');
    // Two upserts that both insert: the server may refuse the second with a duplicate key (MongoDB too); tried again, it updates.
    const setField = (i: number) => shared.updateOne({ _id: 'one' }, { $max: { [`f.k${i}`]: i } }, { upsert: true });
    await Promise.all(
      Array.from({ length: 60 }, (_, i) => setField(i).catch((err: { code?: number }) => (err.code === 11000 ? setField(i) : Promise.reject(err)))),
    );
    expect(Object.keys((await shared.findOne({ _id: 'one' }))?.f ?? {})).toHaveLength(60);
    // findAndModify too: 60 increments of one counter make 60.
    await Promise.all(Array.from({ length: 60 }, () => shared.findOneAndUpdate({ _id: 'one' }, { $inc: { n: 1 } })));
    expect((await shared.findOne({ _id: 'one' }))?.n).toBe(60);
  });

  test('deleteMany by _id $in deletes exactly the listed documents', async () => {
    const res = await col.deleteMany({ _id: { $in: ['d10', 'd11', 'd11', 'missing'] } });
    expect(res.deletedCount).toBe(2);
    expect(await col.countDocuments({ _id: { $in: ['d10', 'd11', 'd12'] } })).toBe(1);
    // A limited or mixed-type delete keeps its usual meaning.
    expect((await col.deleteOne({ _id: { $in: ['d20', 'd21'] } })).deletedCount).toBe(1);
    expect((await col.deleteMany({ _id: { $in: ['d30', 7] } })).deletedCount).toBe(2);
    expect(await col.countDocuments({})).toBe(401 - 2 - 1 - 2);
  });
});

/** MongoDB compares strings by their UTF-8 bytes; type bracketing keeps other types out of a string range. */
const compareStrings = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));

type IdRange = { $gt?: string; $gte?: string; $lt?: string; $lte?: string };

function inRange(id: unknown, r: IdRange): id is string {
  if (typeof id !== 'string') return false;
  return (
    (r.$gt === undefined || compareStrings(id, r.$gt) > 0) &&
    (r.$gte === undefined || compareStrings(id, r.$gte) >= 0) &&
    (r.$lt === undefined || compareStrings(id, r.$lt) < 0) &&
    (r.$lte === undefined || compareStrings(id, r.$lte) <= 0)
  );
}

// Typed by the string ids the reads select; the ids of other types are there to be left out.
type RangeDoc = { _id: string; n: number; name: string };

describe('an _id range read (sorted by _id, limited) on the MongoDB-wire server', () => {
  let col: Collection<RangeDoc>;
  const testDb = useTestDatabase('weft_server_range');
  // Keys like the change feed's (scope|sequence|id), plus the strings whose JSON text sorts
  // unlike the string (escaped characters, ' ' and '!', U+2028) placed where the _id index
  // would misplace them, non-ASCII, and ids of other types.
  const seqKeys = Array.from({ length: 60 }, (_, n) => `c1|File|${String(n * 7).padStart(12, '0')}|f${n}`);
  const awkward = [
    'c1|File|000000000035', // a prefix of the key with sequence 35
    'c1|File|000000000035 copy', // ' ' sorts below the closing quote of the key above
    'c1|File|000000000035!',
    'c1|File|000000000035|f5"quoted',
    'c1|File|00000000004<',
    'c1|File|00000000004&',
    'c1|File|00000000004\\',
    'c1|File|00000000004\n',
    'c1|File|0000000000\u2028',
    'c1|File|000000000070|é',
    'c1|File|000000000070|\u{1F600}',
    'c1|Filf',
    'c1|File',
    'c1|File ',
    'c1|File|',
    'c1|Fil"',
    'c2|File|000000000001|x',
  ];
  const others = [7, -1, 3.5, new ObjectId(), { k: 'c1|File|000000000100' }, true];
  const allIds: unknown[] = [...seqKeys, ...awkward, ...others];

  beforeAll(async () => {
    col = testDb.db().collection('ranges');
    await col.insertMany(allIds.map((_id, n) => ({ _id, n, name: `doc ${n}` })) as unknown as RangeDoc[]);
  });

  const expected = (r: IdRange, dir: 1 | -1, limit: number) =>
    allIds
      .filter((id): id is string => inRange(id, r))
      .sort((a, b) => dir * compareStrings(a, b))
      .slice(0, limit);

  test('returns exactly the first matches in _id order, whatever the bounds, direction, limit and neighbouring ids', async () => {
    const bounds = [
      '',
      'c1|File',
      'c1|File|',
      'c1|File|000000000035',
      'c1|File|000000000035 ',
      'c1|File|00000000004',
      'c1|File|000000000070',
      'c1|File|000000000070|f10',
      'c1|File|~',
      'c1|Filf',
      'c2',
      'c1|File|0000000000',
    ];
    const ranges: IdRange[] = [];
    for (const lo of bounds) {
      ranges.push({ $gt: lo }, { $lte: lo });
      for (const hi of bounds) if (compareStrings(lo, hi) < 0) ranges.push({ $gte: lo, $lt: hi }, { $gt: lo, $lte: hi });
    }
    let compared = 0;
    for (const [i, r] of ranges.entries()) {
      const dir = i % 2 ? 1 : -1;
      for (const limit of [1, 3, 25]) {
        const found = await col.find({ _id: r }).sort({ _id: dir }).limit(limit).toArray();
        expect({ r, dir, limit, ids: found.map((d) => d._id) }).toEqual({ r, dir, limit, ids: expected(r, dir, limit) });
        compared++;
      }
    }
    expect(compared).toBeGreaterThan(200);
  });

  test('keeps inclusive and exclusive bounds, a projection and unsorted reads as MongoDB does', async () => {
    const ids = (docs: RangeDoc[]) => docs.map((d) => d._id);
    const at = (n: number) => seqKeys[n];
    expect(
      ids(
        await col
          .find({ _id: { $gte: at(20), $lte: at(23) } })
          .sort({ _id: 1 })
          .limit(10)
          .toArray(),
      ),
    ).toEqual([at(20), at(21), at(22), at(23)]);
    expect(
      ids(
        await col
          .find({ _id: { $gt: at(20), $lt: at(23) } })
          .sort({ _id: -1 })
          .limit(10)
          .toArray(),
      ),
    ).toEqual([at(22), at(21)]);
    const projected = await col
      .find({ _id: { $gt: at(20) } }, { projection: { name: 1 } })
      .sort({ _id: 1 })
      .limit(2)
      .toArray();
    expect(projected).toEqual([
      { _id: at(21), name: 'doc 21' },
      { _id: at(22), name: 'doc 22' },
    ]);
    // Without a sort every match is returned (in any order); with a skip, the right page.
    const unsorted = ids(await col.find({ _id: { $gte: 'c1|File|', $lt: 'c1|File|000000000070' } }).toArray());
    expect([...unsorted].sort(compareStrings)).toEqual(expected({ $gte: 'c1|File|', $lt: 'c1|File|000000000070' }, 1, 1000));
    const skipped = ids(
      await col
        .find({ _id: { $gte: 'c1|File|' } })
        .sort({ _id: 1 })
        .skip(5)
        .limit(3)
        .toArray(),
    );
    expect(skipped).toEqual(expected({ $gte: 'c1|File|' }, 1, 8).slice(5));
  });

  test('a range beside another condition still answers correctly', async () => {
    const r: IdRange = { $gte: seqKeys[0], $lt: seqKeys[20] };
    const found = await col
      .find({ _id: r, n: { $gte: 15 } })
      .sort({ _id: 1 })
      .limit(3)
      .toArray();
    const wanted = expected(r, 1, 1000).filter((id) => allIds.indexOf(id) >= 15);
    expect(found.map((d) => d._id)).toEqual(wanted.slice(0, 3));
    expect(wanted.length).toBeGreaterThan(3);
    const viaAnd = await col
      .find({ $and: [{ _id: { $gt: seqKeys[40] } }, { _id: { $lt: 'c2' } }] })
      .sort({ _id: -1 })
      .limit(2)
      .toArray();
    expect(viaAnd.map((d) => d._id)).toEqual(expected({ $gt: seqKeys[40], $lt: 'c2' }, -1, 2));
  });

  test('deleteMany by an _id range deletes exactly the strings in it', async () => {
    const r: IdRange = { $gte: 'c1|File|000000000035', $lt: 'c1|File|000000000070|f' };
    const inIt = expected(r, 1, 1000);
    expect(inIt.length).toBeGreaterThan(5);
    expect((await col.deleteMany({ _id: r })).deletedCount).toBe(inIt.length);
    const left = (await col.find({}).toArray()).map((d) => d._id as unknown);
    expect(left).toHaveLength(allIds.length - inIt.length);
    expect(left.filter((id) => inRange(id, r))).toEqual([]);
    // The rest of the tests read from a full collection again.
    await col.insertMany(inIt.map((_id) => ({ _id, n: allIds.indexOf(_id), name: `doc ${allIds.indexOf(_id)}` })));
  });

  test('is read through the _id index in _id order with the limit (explain)', async () => {
    const explain = await col
      .find({ _id: { $gt: seqKeys[10], $lt: seqKeys[50] } })
      .sort({ _id: -1 })
      .limit(100)
      .explain();
    if (explain.serverInfo?.ferretdbVersion) {
      // FerretDB reports what its SQLite backend was given, and SQLite's own plan.
      expect({ filter: explain.filterPushdown, sort: explain.sortPushdown, limit: explain.limitPushdown }).toEqual({ filter: true, sort: true, limit: true });
      const plan = (explain.queryPlanner as { Plan: string[] }).Plan.join('\n');
      expect(plan).toMatch(/SEARCH \S+ USING INDEX \S+__id_ \(<expr>>\? AND <expr><\?\)/);
      expect(plan).not.toMatch(/USE TEMP B-TREE/); // no sort step: the index gives the order
      // A filter beyond the range is not pushed down (the handler reads and filters as before).
      const mixed = await col
        .find({ _id: { $gt: seqKeys[10] }, n: 3 })
        .sort({ _id: 1 })
        .limit(5)
        .explain();
      expect({ filter: mixed.filterPushdown, limit: mixed.limitPushdown }).toEqual({ filter: false, limit: false });
    } else {
      expect(JSON.stringify(explain.queryPlanner.winningPlan)).toContain('IXSCAN');
    }
  });
});
