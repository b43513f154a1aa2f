import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { WeftError } from '../common/errors';
import type { Logger } from '../common/logger';
import { WEFT_SEARCH_ATTRIBUTES } from '../api/services/search-attributes';

const KEYWORD = temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD;

/**
 * Makes sure the namespace has Weft's search attributes before a process serves: a workflow
 * started with an attribute the namespace lacks is refused by Temporal, so every sync
 * trigger would fail later and less clearly. Missing ones are added when the server allows
 * it (a self-hosted cluster, an admin's credentials); when it refuses (Temporal Cloud, a
 * namespace-scoped key), the start stops with `temporal_search_attributes_missing`, naming
 * them and the commands that add them. If the list itself cannot be read, the start goes on
 * with a warning: nothing is known to be missing.
 */
export async function ensureSearchAttributes(client: Client, namespace: string, logger: Logger): Promise<void> {
  const operator = client.connection.operatorService;
  let missing: string[];
  try {
    missing = await missingAttributes(client, namespace);
  } catch (err) {
    if (err instanceof WeftError) throw err;
    logger.warn({ namespace, reason: (err as Error).message }, 'could not list the namespace search attributes; not checked');
    return;
  }
  if (missing.length === 0) return;
  try {
    await operator.addSearchAttributes({ namespace, searchAttributes: Object.fromEntries(missing.map((name) => [name, KEYWORD])) });
    logger.info({ namespace, added: missing }, 'search attributes added');
  } catch (err) {
    // Another process starting at the same moment may have added them.
    const still = await missingAttributes(client, namespace).catch(() => missing);
    if (still.length === 0) return;
    throw new WeftError('temporal_search_attributes_missing', refusal(namespace, still, (err as Error).message), 503, { missing: still });
  }
}

async function missingAttributes(client: Client, namespace: string): Promise<string[]> {
  const listed = await client.connection.operatorService.listSearchAttributes({ namespace });
  const custom = listed.customAttributes ?? {};
  const wrongType = WEFT_SEARCH_ATTRIBUTES.filter((a) => a.name in custom && custom[a.name] !== KEYWORD);
  if (wrongType.length > 0) {
    throw new WeftError(
      'temporal_search_attributes_mismatch',
      `Temporal namespace ${namespace} has ${wrongType.map((a) => a.name).join(', ')} with a type other than Keyword; Weft needs them as Keyword (remove them or use another namespace).`,
    );
  }
  return WEFT_SEARCH_ATTRIBUTES.map((a) => a.name).filter((name) => !(name in custom));
}

function refusal(namespace: string, missing: string[], reason: string): string {
  const cli = `temporal operator search-attribute create --namespace ${namespace} ${missing.map((n) => `--name ${n} --type Keyword`).join(' ')}`;
  const tcld = `tcld namespace search-attributes add --namespace ${namespace} ${missing.map((n) => `--search-attribute "${n}=Keyword"`).join(' ')}`;
  return (
    `Temporal namespace ${namespace} lacks Weft's search attributes ${missing.join(', ')}, and this process may not add them (${reason.replace(/\s+/g, ' ').trim()}). ` +
    `Add them once with an admin's credentials: \`${cli}\`; on Temporal Cloud: \`${tcld}\` (the namespace with its account suffix).`
  );
}
