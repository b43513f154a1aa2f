import { defineSearchAttributeKey, SearchAttributeType, TypedSearchAttributes } from '@temporalio/common';

/**
 * Custom search attributes on every Weft workflow, so operators can find runs in the Temporal
 * UI by connection, integration and sync (e.g. `WeftConnectionId = "user-42"`). The dev server
 * gets them from temporal-dev.yaml; any other cluster from each process's start
 * (app/temporal-search-attributes.ts), which adds those missing when the server lets it.
 */
const WeftEnvironment = defineSearchAttributeKey('WeftEnvironment', SearchAttributeType.KEYWORD);
const WeftIntegration = defineSearchAttributeKey('WeftIntegration', SearchAttributeType.KEYWORD);
const WeftConnectionId = defineSearchAttributeKey('WeftConnectionId', SearchAttributeType.KEYWORD);
const WeftSyncName = defineSearchAttributeKey('WeftSyncName', SearchAttributeType.KEYWORD);
const WeftOperation = defineSearchAttributeKey('WeftOperation', SearchAttributeType.KEYWORD);

/** Every attribute Weft sets, all Keyword. */
export const WEFT_SEARCH_ATTRIBUTES = [WeftEnvironment, WeftIntegration, WeftConnectionId, WeftSyncName, WeftOperation];

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
