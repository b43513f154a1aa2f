import type { Collection } from 'mongodb';
import { useTestDatabase } from '../support/test-database';

/**
 * What the records engine relies on from the MongoDB-wire server, and what Weft's FerretDB
 * build patches (scripts/infra/binaries.ts) must keep true: `_id` `$in` reads and deletes
 * answer exactly as MongoDB does, and an update command of hundreds of statements ends.
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
