import type { Circus } from '@jest/types';
import { TestEnvironment } from 'jest-environment-node';

/**
 * Jest's node environment, plus: a green test file prints nothing but what jest reports.
 * What the file held back (Temporal's warnings and errors: tests/support/held-output.ts) is
 * printed at its end only when one of its tests or hooks failed, for that failure's story.
 */
export default class WeftTestEnvironment extends TestEnvironment {
  private failures = 0;

  handleTestEvent(event: Circus.Event): void {
    if ((event.name === 'test_done' && event.test.errors.length > 0) || event.name === 'hook_failure') this.failures++;
  }

  override async teardown(): Promise<void> {
    const global = this.global as { __weftHeldOutput?: string[]; __weftRuntimeShutdown?: Array<() => Promise<void>> };
    // The file's Temporal Runtime (tests/support/temporal-runtime.ts): left running, it keeps this worker process alive.
    // Bounded: a shutdown that hangs must not hang the run (jest then reports the worker as before).
    for (const shutdown of global.__weftRuntimeShutdown ?? []) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([shutdown().catch(() => undefined), new Promise((resolve) => (timer = setTimeout(resolve, 5_000)))]);
      clearTimeout(timer);
    }
    const held = global.__weftHeldOutput ?? [];
    if (this.failures > 0 && held.length > 0) {
      process.stderr.write(`\n-- Temporal's log while this file ran (held back; printed because a test failed) --\n${held.join('\n')}\n-- end --\n`);
    }
    await super.teardown();
  }
}
