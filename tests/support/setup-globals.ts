// Jest setupFiles entry: the SyncMock / ActionMock globals of the testing
// workflow (and its network guard), and the timezone pinned so date formatting in
// assertions does not depend on the machine.
import '../../runtime/mocks/jest-setup';

process.env.TZ = 'UTC';
