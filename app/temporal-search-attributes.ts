import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { WeftError } from '../common/errors';
import type { Logger } from '../common/logger';
import { WEFT_SEARCH_ATTRIBUTES } from '../control';

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
  let missing: string[];
  try {
    missing = await missingAttributes(client, namespace);
  } catch (err) {
    if (err instanceof WeftError) throw err;
    logger.warn({ namespace, reason: (err as Error).message }, 'could not list the namespace search attributes; not checked');
    return;
  }
  if (missing.length > 0) await add(client, namespace, missing, logger);
  // Listed is not yet usable: checked even when nothing was missing, since another process
  // may have added them a moment ago.
  await untilQueryable(
    client,
    namespace,
    WEFT_SEARCH_ATTRIBUTES.map((a) => a.name),
    logger,
  );
}

async function add(client: Client, namespace: string, missing: string[], logger: Logger): Promise<void> {
  const operator = client.connection.operatorService;
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

const QUERYABLE_WAIT_MS = 30_000;
const QUERYABLE_POLL_MS = 250;

/**
 * A self-hosted server lists new attributes at once but resolves them through a namespace
 * cache that refreshes a few seconds later; until then a schedule or workflow started with
 * them is refused ("no mapping defined for search attribute"). So the start waits until a
 * query naming them is accepted. A server whose visibility cannot count (standard
 * visibility) answers with another error, and the wait ends there.
 */
async function untilQueryable(client: Client, namespace: string, names: string[], logger: Logger): Promise<void> {
  const query = names.map((name) => `${name} = 'weft-probe'`).join(' AND ');
  const deadline = Date.now() + QUERYABLE_WAIT_MS;
  for (;;) {
    try {
      await client.workflowService.countWorkflowExecutions({ namespace, query });
      logger.debug({ namespace }, 'search attributes usable');
      return;
    } catch (err) {
      const message = (err as Error).message ?? '';
      if (!/no mapping|not a valid search attribute|unknown search attribute/i.test(message)) {
        logger.debug({ namespace, reason: message }, 'search attributes not probed');
        return;
      }
      logger.debug({ namespace, reason: message }, 'search attributes not yet usable');
      if (Date.now() > deadline) {
        logger.warn({ namespace, reason: message }, 'search attributes added but not yet usable; going on');
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, QUERYABLE_POLL_MS));
    }
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
