/** How waitUntil polls. A number is the timeout alone. */
export interface WaitOptions {
  /** Give up after this long (default 20 s). */
  timeoutMs?: number;
  /** Time between two checks (default 100 ms). */
  everyMs?: number;
  /** What is awaited, for the timeout's message. */
  what?: string;
  /** The state when it gave up, added to the timeout's message. */
  describe?: () => string;
  /**
   * A check that throws counts as "not yet" (an API that answers an error until a run has
   * written its state); the last error is in the timeout's message. Otherwise it fails the wait.
   */
  retryErrors?: boolean;
}

/**
 * The one poll of the tests: calls `check` until it gives a truthy value and returns that
 * value, or fails after the timeout naming what it waited for. Nothing is asserted on how
 * long it took: a loaded machine only makes it poll more often.
 */
export async function waitUntil<T>(check: () => T | Promise<T>, options: WaitOptions | number = {}): Promise<NonNullable<T>> {
  const {
    timeoutMs = 20_000,
    everyMs = 100,
    what = 'a condition',
    describe,
    retryErrors = false,
  } = typeof options === 'number' ? { timeoutMs: options } : options;
  const end = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value) return value as NonNullable<T>;
    } catch (err) {
      if (!retryErrors) throw err;
      lastError = err;
    }
    if (Date.now() > end) {
      const state = describe ? `: ${describe()}` : lastError ? ` (last error: ${(lastError as Error).message ?? String(lastError)})` : '';
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${state}`);
    }
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

/** waitUntil for a condition, every 50 ms, named: `await waitFor(() => isDone(), 10_000, 'the run to finish')`. */
export async function waitFor(check: () => boolean | Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  await waitUntil(check, { timeoutMs, what, everyMs: 50 });
}
