import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';

/** Bundles workflows/ once per test run; every test worker reuses the file. */
export async function bundleWorkflowsTo(file: string): Promise<void> {
  const { code } = await bundleWorkflowCode({
    workflowsPath: path.resolve(__dirname, '../../workflows'),
    logger: { trace() {}, debug() {}, info() {}, warn() {}, error: (m: string) => console.error(m), log() {} } as never,
  });
  writeFileSync(file, code);
}
