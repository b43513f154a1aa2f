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
    const held = (this.global as { __weftHeldOutput?: string[] }).__weftHeldOutput ?? [];
    if (this.failures > 0 && held.length > 0) {
      process.stderr.write(`\n-- Temporal's log while this file ran (held back; printed because a test failed) --\n${held.join('\n')}\n-- end --\n`);
    }
    await super.teardown();
  }
}
