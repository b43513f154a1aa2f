import { defineSearchAttributeKey, SearchAttributeType, TypedSearchAttributes } from '@temporalio/common';

/**
 * Custom search attributes on every Weft workflow, registered with the dev server from
 * temporal-dev.yaml, so operators can find runs in the Temporal UI by connection,
 * integration and sync (e.g. `WeftConnectionId = "user-42"`).
 */
const WeftEnvironment = defineSearchAttributeKey('WeftEnvironment', SearchAttributeType.KEYWORD);
const WeftIntegration = defineSearchAttributeKey('WeftIntegration', SearchAttributeType.KEYWORD);
const WeftConnectionId = defineSearchAttributeKey('WeftConnectionId', SearchAttributeType.KEYWORD);
const WeftSyncName = defineSearchAttributeKey('WeftSyncName', SearchAttributeType.KEYWORD);
const WeftOperation = defineSearchAttributeKey('WeftOperation', SearchAttributeType.KEYWORD);

export function searchAttributesFor(a: {
  environment: string;
  integration: string;
  /** Absent for an operation over every connection of the integration. */
  connectionId?: string;
  syncName?: string;
  operation: string;
}): TypedSearchAttributes {
  return new TypedSearchAttributes([
    { key: WeftEnvironment, value: a.environment },
    { key: WeftIntegration, value: a.integration },
    { key: WeftOperation, value: a.operation },
    ...(a.connectionId ? [{ key: WeftConnectionId, value: a.connectionId }] : []),
    ...(a.syncName ? [{ key: WeftSyncName, value: a.syncName }] : []),
  ]);
}
