import { HELD_OUTPUT } from '../../support/held-output';

// Run by tests/lint/quiet-output.test.ts only: a file whose second test fails.
test('holds a line and passes', () => {
  HELD_OUTPUT.push('held-by-the-failing-file');
});
test('fails', () => {
  expect('the failure').toBe('the story the held lines tell');
});
