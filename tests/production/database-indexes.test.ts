import { readFileSync } from 'node:fs';
import path from 'node:path';
import { createStores, ensureIndexes } from '../../store/db';
import { useTestDatabase } from '../support/test-database';

const GUIDE = path.resolve(__dirname, '../../docs/deploying.md');
const DAY_S = 86_400;

interface DocumentedIndex {
  collection: string;
  fields: string[];
  unique: boolean;
  /** Seconds of retention, for a TTL index. */
  retentionS?: number;
  /** Made on MongoDB only (FerretDB reads by `_id` alone, or has no TTL). */
  mongoOnly: boolean;
}

/** The rows of the guide's "Indexes and retention" table. */
function documentedIndexes(): DocumentedIndex[] {
  const text = readFileSync(GUIDE, 'utf8');
  const section = text.slice(text.indexOf('### Indexes and retention'), text.indexOf('Everything else is addressed by `_id`'));
  const rows = section.split('\n').filter((line) => /^\| `/.test(line));
  const names = (cell: string) => [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1]);
  return rows.flatMap((row) => {
    const [collections, indexes, retention] = row
      .split('|')
      .slice(1, 4)
      .map((c) => c.trim());
    const retentionS = /TTL at the date/.test(retention)
      ? 0
      : /WEFT_REQUEST_LOG_TTL_DAYS` \((\d+)\)/.test(retention)
        ? Number(/\((\d+)\)/.exec(retention)![1]) * DAY_S
        : /(\d+) days?/.test(retention)
          ? Number(/(\d+) days?/.exec(retention)![1]) * DAY_S
          : /^1 day$/.test(retention)
            ? DAY_S
            : undefined;
    return names(collections).flatMap((collection) =>
      indexes.split(';').map((index) => ({
        collection,
        fields: names(index)[0].split(', '),
        unique: index.includes('(unique)'),
        retentionS,
        mongoOnly: index.includes('MongoDB only'),
      })),
    );
  });
}

/**
 * The deployment guide tells operators which indexes and retention Weft makes (what their
 * database user must allow, what to expect in their monitoring). It is checked against what
 * `ensureIndexes` makes on a real database, so a new index or TTL cannot go unmentioned.
 */
describe("the deployment guide's index table", () => {
  const { db } = useTestDatabase('weft_index_docs');

  test('names every index and retention rule ensureIndexes makes, and nothing it does not', async () => {
    const rules = await ensureIndexes(createStores(db(), { requestLogTtlDays: 14 }));
    const documented = documentedIndexes();
    expect(documented.length).toBeGreaterThan(10);

    // Retention: each rule the store returns (FerretDB has no TTL: all are swept) is documented with its period.
    const documentedRetention = documented.filter((d) => d.retentionS !== undefined);
    for (const rule of rules) {
      const row = documentedRetention.find((d) => d.collection === rule.collection.collectionName && d.fields[0] === rule.field);
      expect({ rule: `${rule.collection.collectionName}.${rule.field}`, seconds: row?.retentionS }).toEqual({
        rule: `${rule.collection.collectionName}.${rule.field}`,
        seconds: rule.seconds,
      });
    }
    for (const row of documentedRetention.filter((d) => !d.mongoOnly)) {
      expect(rules.map((r) => `${r.collection.collectionName}.${r.field}`)).toContain(`${row.collection}.${row.fields[0]}`);
    }

    // Secondary indexes (those standing in for a TTL on FerretDB aside).
    const actual: string[] = [];
    for (const { name } of await db().listCollections().toArray()) {
      for (const index of await db().collection(name).indexes()) {
        const fields = Object.keys(index.key);
        if (index.name === '_id_' || rules.some((r) => r.collection.collectionName === name && fields.length === 1 && r.field === fields[0])) continue;
        actual.push(`${name}: ${fields.join(', ')}${index.unique ? ' (unique)' : ''}`);
      }
    }
    const documentedPlain = documented.filter((d) => d.retentionS === undefined);
    const describe = (d: DocumentedIndex) => `${d.collection}: ${d.fields.join(', ')}${d.unique ? ' (unique)' : ''}`;
    expect(actual.sort()).toEqual(
      documentedPlain
        .filter((d) => !d.mongoOnly)
        .map(describe)
        .sort(),
    );
  });
});
