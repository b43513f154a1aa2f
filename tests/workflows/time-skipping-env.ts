import path from 'node:path';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker, type WorkerOptions } from '@temporalio/worker';
import { installTestRuntime } from '../support/temporal-runtime';
import { infraOptionsFromEnv } from '../../scripts/infra/infra-env';
import { resolveTestServer } from '../../scripts/infra/test-server';

/**
 * Temporal's time-skipping test server, fetched by `npm run infra:build` into the binary
 * cache (the SDK's own download needs the internet). Timers, backoff and rate-limit waits
 * pass in milliseconds of wall time whenever no activity is running.
 */
export async function createTimeSkippingEnv(): Promise<TestWorkflowEnvironment> {
  quietTestRuntime();
  const { binaries } = infraOptionsFromEnv();
  const launcher = await resolveTestServer({ explicitPath: binaries.temporalTestServer, cacheDir: binaries.cacheDir });
  // The SDK gives the server 5 s to listen, a limit it does not let us raise; a JVM on two
  // busy cores can miss it. Such a start is tried again (the SDK stops the late process).
  for (let attempt = 1; ; attempt++) {
    try {
      return await TestWorkflowEnvironment.createTimeSkipping({ server: { executable: { type: 'existing-path', path: launcher } } });
    } catch (err) {
      if (attempt >= 3 || !/did not start within/.test(String((err as Error).message))) throw err;
    }
  }
}

/**
 * These tests fail activities and workflows on purpose (and the test server lacks a capability
 * the core SDK warns about on every worker): Temporal's own log is held back, and its core
 * says only errors.
 */
export function quietTestRuntime(): void {
  installTestRuntime({ coreLogLevel: 'ERROR' });
}

/** The workflows bundled once per test run by globalSetup, or bundled here when run without it. */
export function workflowCode(): Pick<WorkerOptions, 'workflowBundle' | 'workflowsPath'> {
  const bundle = process.env.WEFT_TEST_WORKFLOW_BUNDLE;
  return bundle ? { workflowBundle: { codePath: bundle } } : { workflowsPath: path.resolve(__dirname, '../../workflows') };
}

let queues = 0;
/** A worker for the real workflows with the given activities, on a task queue of its own. */
export async function createTestWorker(env: TestWorkflowEnvironment, activities: object): Promise<Worker> {
  return Worker.create({
    connection: env.nativeConnection,
    taskQueue: `workflow-test-${process.pid}-${++queues}`,
    ...workflowCode(),
    activities,
  });
}
