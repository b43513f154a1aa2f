import { processProviderDeliveries, type DeliveryProcessingDeps } from './provider-deliveries';

export interface ProviderDeliveryProcessor {
  /** No more passes; resolves when the pass in progress has ended. */
  stop(): Promise<void>;
}

/**
 * Processes the deliveries the intake stores, pass after pass, in a worker process: at once
 * again after a full pass, else every `idleMs` (the intake runs in the API processes, so
 * this looks rather than being told). Several processes may run one: a delivery's claim
 * decides which one processes it (ProviderDeliveryStore.claim).
 */
export function startProviderDeliveryProcessor(deps: DeliveryProcessingDeps, opts: { idleMs?: number; batch?: number } = {}): ProviderDeliveryProcessor {
  const idleMs = opts.idleMs ?? 200;
  const batch = opts.batch ?? 100;
  let stopped = false;
  let cancelRest: (() => void) | null = null;
  const rest = () =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, idleMs);
      cancelRest = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  const loop = (async () => {
    while (!stopped) {
      let full = false;
      try {
        full = (await processProviderDeliveries(deps, batch)) >= batch;
      } catch (err) {
        deps.logger.warn({ err: (err as Error)?.message }, 'provider delivery pass failed; trying again');
      }
      if (!full && !stopped) await rest();
    }
  })();
  return {
    async stop() {
      stopped = true;
      cancelRest?.();
      await loop;
    },
  };
}
