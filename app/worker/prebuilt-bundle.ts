import { existsSync } from 'node:fs';
import path from 'node:path';

/**
 * The workflow bundle `npm run build` writes at the root of the build (scripts/build/build.ts),
 * when this code runs compiled from there: dist/app/worker/ → dist/workflow-bundle.js. Run from
 * the sources (tsx) there is none, and the worker bundles workflows/ at start as before.
 */
export function prebuiltWorkflowBundle(): string | undefined {
  const file = path.resolve(__dirname, '..', '..', 'workflow-bundle.js');
  return existsSync(file) ? file : undefined;
}
