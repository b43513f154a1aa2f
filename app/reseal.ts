import type { Config } from '../common/config';
import { resealWithCurrentKey } from '../store/reseal';
import { openStorage, type Core } from './core';

/**
 * Every long-running process does this at start: a rotated WEFT_ENCRYPTION_KEY, or values of
 * an older Weft not yet bound to their place, are moved to the current key in the background.
 */
export function resealInBackground(core: Core): void {
  resealWithCurrentKey(core.stores.db, core.cipher)
    .then((n) => n > 0 && core.logger.info({ resealed: n }, 'secrets re-sealed with the current encryption key'))
    .catch((err: unknown) => core.logger.warn({ err }, 'could not re-seal secrets with the current encryption key'));
}

/** `weft reseal`: the same re-seal as a one-shot command, on the database alone; resolves with how many values it re-sealed. */
export async function resealSecrets(config: Config): Promise<number> {
  const storage = await openStorage(config);
  try {
    return await resealWithCurrentKey(storage.stores.db, storage.cipher);
  } finally {
    await storage.close();
  }
}
