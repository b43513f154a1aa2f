/**
 * `npm run build`: the product compiled to dist/ for production, so `weft worker` and
 * `weft api` run plain JavaScript instead of TypeScript through tsx.
 *
 *   dist/<folder>/…            tsc -p tsconfig.build.json (CommonJS, ES2022, source maps)
 *   dist/scripts/infra/…       plus the files the infrastructure code reads beside itself
 *   dist/workflow-bundle.js    the Temporal workflow bundle, so a compiled worker never runs
 *                              webpack at start (app/worker/prebuilt-bundle.ts finds it)
 *   dist/workflow-bundle-otel.js  the same with the OpenTelemetry workflow interceptors, for a
 *                              worker with traces on (twice the size: the OTel SDK inside)
 *
 * `npm run build -- --out-dir <dir>` builds elsewhere (the build test does). The directory
 * must sit inside the repository: the compiled code finds node_modules by walking up from it.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';

const REPO = path.resolve(__dirname, '..', '..');
/** The names app/worker/prebuilt-bundle.ts looks for at the root of the build. */
const WORKFLOW_BUNDLE_FILE = 'workflow-bundle.js';
const TRACED_WORKFLOW_BUNDLE_FILE = 'workflow-bundle-otel.js';
/** Non-TypeScript files the compiled code reads from beside itself (path relative to the repo). */
const ASSETS = ['scripts/infra/supervisor.js', 'scripts/infra/ferretdb-patches'];

async function main(): Promise<void> {
  const outDir = path.resolve(REPO, outDirArgument(process.argv.slice(2)));
  if (outDir === REPO || !outDir.startsWith(REPO + path.sep))
    throw new Error(`--out-dir must be a directory inside ${REPO} (node_modules is found from there)`);
  const started = Date.now();
  // From scratch: a file deleted from the sources must not live on in the build.
  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(outDir, { recursive: true });

  const tsc = spawnSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', path.join(REPO, 'tsconfig.build.json'), '--outDir', outDir], {
    cwd: REPO,
    stdio: 'inherit',
  });
  if (tsc.status !== 0) throw new Error(`tsc failed (exit ${tsc.status ?? tsc.signal})`);

  for (const asset of ASSETS) cpSync(path.join(REPO, asset), path.join(outDir, asset), { recursive: true });

  // Bundled from the compiled workflows, so the bundle is exactly the code that was built. Twice:
  // a worker with traces on needs the OpenTelemetry workflow interceptors (workflow spans, trace
  // context on to its activities), which would double every isolate's code for the others.
  const sizes: string[] = [];
  for (const [file, interceptors] of [
    [WORKFLOW_BUNDLE_FILE, []],
    [TRACED_WORKFLOW_BUNDLE_FILE, [require.resolve('@temporalio/interceptors-opentelemetry/lib/workflow-interceptors')]],
  ] as const) {
    const { code } = await bundleWorkflowCode({
      workflowsPath: path.join(outDir, 'workflows'),
      workflowInterceptorModules: [...interceptors],
      logger: { trace() {}, debug() {}, info() {}, warn: (m: string) => console.warn(m), error: (m: string) => console.error(m), log() {} } as never,
    });
    writeFileSync(path.join(outDir, file), latin1Only(code));
    sizes.push(`${file} ${(code.length / 1024).toFixed(0)} KB`);
  }
  console.log(`built ${path.relative(REPO, outDir)}/ in ${((Date.now() - started) / 1000).toFixed(1)} s (${sizes.join(', ')})`);
}

/**
 * The bundle with every character above U+00FF written as a \\u escape. A single one (there
 * are a few dashes in comments) makes V8 hold the whole 1.6 MB bundle as a two-byte string:
 * twice the memory in the worker's main thread and in every workflow isolate. The escape
 * means the same in comments, strings, regular expressions and identifiers.
 */
function latin1Only(code: string): string {
  return code.replace(/[\u0100-\uffff]/g, (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

function outDirArgument(args: string[]): string {
  const i = args.indexOf('--out-dir');
  if (i === -1) return 'dist';
  const dir = args[i + 1];
  if (!dir) throw new Error('--out-dir needs a directory');
  return dir;
}

main().catch((err: unknown) => {
  console.error(`build failed: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
