import { existsSync } from 'node:fs';
import path from 'node:path';

/**
 * The workflow bundle `npm run build` writes at the root of the build (scripts/build/build.ts),
 * when this code runs compiled from there: dist/app/worker/ → dist/workflow-bundle.js, or with
 * `traced` (OpenTelemetry traces on) dist/workflow-bundle-otel.js, the one with the OTel
 * workflow interceptors. Run from the sources (tsx) there is none, and the worker bundles
 * workflows/ at start as before.
 */
export function prebuiltWorkflowBundle(opts: { traced?: boolean } = {}): string | undefined {
  const file = path.resolve(__dirname, '..', '..', opts.traced ? 'workflow-bundle-otel.js' : 'workflow-bundle.js');
  return existsSync(file) ? file : undefined;
}
