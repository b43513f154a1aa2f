/**
 * `npm run infra:build`: obtain the server binaries (and the time-skipping test server) ahead of time (CI image warm-up, or a
 * fresh clone), so the first `npm start` / `npm test` does not spend minutes compiling.
 */
import { resolveBinary, type BinaryName } from './binaries';
import { infraOptionsFromEnv } from './infra-env';
import { resolveTestServer } from './test-server';

async function main(): Promise<void> {
  const { binaries } = infraOptionsFromEnv();
  const log = (msg: string) => process.stderr.write(`[infra] ${msg}\n`);
  // At once: each build holds its own lock, and Go parallelises within a build anyway.
  const timed = async (name: string, resolve: () => Promise<string>) => {
    const started = Date.now();
    const file = await resolve();
    return { name, file, seconds: (Date.now() - started) / 1000 };
  };
  const binary = (name: BinaryName) => timed(name, () => resolveBinary(name, { explicitPath: binaries[name], cacheDir: binaries.cacheDir, log }));
  const results = await Promise.all([
    // The plain Temporal server after the CLI, not beside it: it is the server the CLI embeds, so
    // built second it finds most of its packages in Go's build cache instead of compiling them twice at once.
    binary('temporal').then(async (cli) => [cli, await binary('temporal-server')]),
    binary('ferretdb'),
    // Java + Maven, for workflow tests on the time-skipping test server.
    timed('temporal-test-server', () => resolveTestServer({ explicitPath: binaries.temporalTestServer, cacheDir: binaries.cacheDir, log })),
  ]);
  for (const r of results.flat()) console.log(`${r.name}: ${r.file} (${r.seconds.toFixed(1)} s)`);
}

main().catch((err: unknown) => {
  const e = err as { code?: string; message?: string };
  console.error(`infra:build failed${e.code ? ` [${e.code}]` : ''}: ${e.message ?? String(err)}`);
  process.exit(1);
});
