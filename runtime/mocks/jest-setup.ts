/**
 * The jest setup of the testing workflow: `SyncMock` and `ActionMock` as
 * globals, typed for strict TypeScript, and the network guard switched off at the start of
 * each test file (the file's first mock switches it on). A project's jest config lists this
 * module (or a file importing it) as its one setup file.
 */
import { ActionMock as ActionMockClass, SyncMock as SyncMockClass } from './mock-context';
import { resetNetworkGuard } from './network-guard';

declare global {
  /** A sync's `ctx` answered from `tests/mocks/<integration>/mocks/<sync>/`. */
  var SyncMock: typeof SyncMockClass;
  /** An action's `ctx` answered from `tests/mocks/<integration>/mocks/<action>/`. */
  var ActionMock: typeof ActionMockClass;
}

globalThis.SyncMock = SyncMockClass;
globalThis.ActionMock = ActionMockClass;
resetNetworkGuard();
