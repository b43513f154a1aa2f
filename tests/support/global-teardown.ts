import type { Infrastructure } from '../../scripts/infra/infrastructure';
import { INFRA_HANDLE_KEY } from './global-setup';

/** Jest globalTeardown: stops the servers globalSetup started (nothing, if they were external). */
export default async function globalTeardown(): Promise<void> {
  const store = globalThis as Record<string, unknown>;
  const infra = store[INFRA_HANDLE_KEY] as Infrastructure | undefined;
  delete store[INFRA_HANDLE_KEY];
  await infra?.stop();
}
