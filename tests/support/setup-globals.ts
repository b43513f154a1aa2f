// Jest setupFiles entry (spec rule 7). The SyncMock / ActionMock globals of the testing
// workflow are registered here once they exist; for now it only pins the timezone so
// date formatting in assertions does not depend on the machine.
process.env.TZ = 'UTC';
