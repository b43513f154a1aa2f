import { HELD_OUTPUT } from '../../support/held-output';

// Run by tests/lint/quiet-output.test.ts only: a green file that held a line.
test('holds a line and passes', () => {
  HELD_OUTPUT.push('held-by-the-green-file');
});
