/**
 * Output a test file holds back: printed by the test environment
 * (tests/support/test-environment.ts) when one of the file's tests failed, dropped otherwise.
 * Kept on the file's global object, which the environment reads at its teardown.
 */
const holder = globalThis as typeof globalThis & { __weftHeldOutput?: string[]; __weftRuntimeShutdown?: Array<() => Promise<void>> };
export const HELD_OUTPUT: string[] = (holder.__weftHeldOutput ??= []);

/** What the test environment runs at the file's end, after its tests and hooks: the Temporal Runtime's shutdown. */
export const RUNTIME_SHUTDOWN: Array<() => Promise<void>> = (holder.__weftRuntimeShutdown ??= []);
