import { randomBytes } from 'node:crypto';
import { MongoClient, type Db } from 'mongodb';
import { testInfra } from './weft-stack';

/**
 * A database of its own for one test file on the run's MongoDB-wire server (FerretDB by
 * default): connected before the tests, dropped after them. Call at the top of a describe.
 */
export function useTestDatabase(prefix: string): { client: () => MongoClient; db: () => Db } {
  const name = `${prefix}_${randomBytes(4).toString('hex')}`;
  let client: MongoClient | undefined;
  beforeAll(async () => {
    client = new MongoClient(testInfra().mongodbUri, { retryWrites: false });
    await client.connect();
  });
  afterAll(async () => {
    await client
      ?.db(name)
      .dropDatabase()
      .catch(() => undefined);
    await client?.close();
  });
  const connected = () => {
    if (!client) throw new Error('useTestDatabase: used outside the tests of its describe');
    return client;
  };
  return { client: connected, db: () => connected().db(name) };
}
