import { BadRequestError } from '../../common/errors';
import type { z } from 'zod';
import type { IntegrationRegistry } from '../../runtime/registry';
import type { ConnectionDoc } from '../../store/connections';
import type { Stores } from '../../store/db';
import type { pruneRecordsBody } from '../schemas/records';
import { isKnownModel, resolveModel } from './record-listing';
import { decodeRecordCursor } from '../../store/record-cursor';

type PruneRecordsBody = z.infer<typeof pruneRecordsBody>;

/**
 * `PATCH /records/prune`: drops the payloads of a connection's records of one model up to a
 * cursor of `GET /records` (inclusive). Everything is checked before anything is written: a
 * model no sync of the integration stores, or a cursor this API did not issue, changes nothing.
 */
export async function pruneRecords(stores: Stores, registry: IntegrationRegistry, connection: ConnectionDoc, body: PruneRecordsBody) {
  if (!isKnownModel(registry, connection.provider, body.model)) {
    throw new BadRequestError('unknown_model', `No sync of integration "${connection.provider_config_key}" stores model "${body.model}".`);
  }
  const until = decodeRecordCursor(body.until_cursor);
  const { model } = resolveModel(registry, connection.provider, body.model);
  const result = await stores.records.prune(
    { environment: connection.environment, connection: connection._id, model, variant: body.variant },
    until,
    body.limit,
  );
  return { count: result.count, has_more: result.hasMore };
}
