import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { bundleWorkflowsTo } from './bundle-workflows';

/**
 * Work done once per test run after the servers are up and before any suite starts:
 * bundle the workflow code once (webpack takes seconds on a 2-core box) and let every
 * jest worker and spawned worker process load the same file.
 */
export async function prepareTestRun(): Promise<void> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'weft-test-bundle-'));
  const file = path.join(dir, 'workflow-bundle.js');
  await bundleWorkflowsTo(file);
  process.env.WEFT_TEST_WORKFLOW_BUNDLE = file;
}
