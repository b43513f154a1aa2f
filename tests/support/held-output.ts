/**
 * Output a test file holds back: printed by the test environment
 * (tests/support/test-environment.ts) when one of the file's tests failed, dropped otherwise.
 * Kept on the file's global object, which the environment reads at its teardown.
 */
const holder = globalThis as typeof globalThis & { __weftHeldOutput?: string[] };
export const HELD_OUTPUT: string[] = (holder.__weftHeldOutput ??= []);
