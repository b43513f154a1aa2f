import { secretValuesOf } from '../common/secrets';
import { writeMockRecording, type RecordedExchange } from '../runtime/mocks/fixture-files';
import type { DryRunResult } from '../runtime/dryrun/run';
import type { IntegrationRegistry } from '../runtime/registry';
import type { ActionDefinition, ConnectionInfo, IntegrationDefinition, SyncDefinition } from '../runtime/types';

export interface SaveMocksInput {
  projectDir: string;
  integration: IntegrationDefinition;
  registry: IntegrationRegistry;
  fn: SyncDefinition | ActionDefinition;
  /** The connection as the function saw it (the `--metadata` stub in place of its metadata). */
  connection: ConnectionInfo;
  exchanges: RecordedExchange[];
  result: DryRunResult;
  input: unknown;
  /** Literal secrets known here (the secret key, the connection's credentials), scrubbed from every file. */
  secrets: string[];
}

/**
 * `--save`: the run's recordings as mock files (format and
 * redaction: runtime/mocks, by common/secrets' rules). The values of secret-named fields of
 * the connection's config and metadata join the literal secrets, so one that reappears in a
 * request body, an answer or a URL is removed there too.
 */
export async function saveMocks(s: SaveMocksInput): Promise<string[]> {
  const secrets = [
    ...s.secrets,
    ...secretValuesOf(s.connection.connection_config),
    ...secretValuesOf(s.connection.metadata),
    ...secretValuesOf(s.result.writes.metadata),
  ];
  const { files } = await writeMockRecording({
    projectDir: s.projectDir,
    integration: s.integration.provider.name,
    functionName: s.fn.name,
    kind: s.fn.kind,
    providerBaseUrl: s.integration.provider.baseUrl,
    secretHeaders: s.registry.secretHeaders(),
    exchanges: s.exchanges,
    batchSave: s.result.writes.batchSave,
    batchDelete: s.result.writes.batchDelete,
    ...(s.fn.kind === 'action' ? { input: s.input, output: s.result.output } : {}),
    connection: s.connection,
    metadata: s.connection.metadata,
    secrets,
  });
  return files;
}
