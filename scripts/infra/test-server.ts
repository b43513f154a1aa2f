import { execFile } from 'node:child_process';
import { constants as fsConstants } from 'node:fs';
import { access, chmod, mkdir, mkdtemp, readFile, readdir, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { acquireBuildLock } from './binaries';
import { InfraError, tail } from './errors';
import { childProcessEnv } from './infra-env';

/**
 * Temporal's time-skipping test server (Java, from Maven Central). The SDK's own download of
 * it fails offline, so it is fetched with Maven like the other servers are built with Go:
 * once per machine, into the binary cache, as a directory of jars plus a small launcher that
 * `TestWorkflowEnvironment.createTimeSkipping` runs with the port as its argument.
 */
const TEST_SERVER_ARTIFACT = { groupId: 'io.temporal', artifactId: 'temporal-test-server', version: '1.31.0' } as const;

const MAIN_CLASS = 'io.temporal.testserver.TestServer';
/** The server logs through SLF4J 1.7; without a binding it prints three warning lines on every start. */
const SLF4J_NOP = { groupId: 'org.slf4j', artifactId: 'slf4j-nop', version: '1.7.36' } as const;
/** The launcher's second line; a launcher without exactly this line is from another build and rebuilt. */
const LAUNCHER_MARKER = `# weft ${TEST_SERVER_ARTIFACT.groupId}:${TEST_SERVER_ARTIFACT.artifactId}:${TEST_SERVER_ARTIFACT.version} +${SLF4J_NOP.artifactId}`;
const EXPLICIT_ENV = 'WEFT_TEMPORAL_TEST_SERVER';

export interface ResolveTestServerOptions {
  /** A launcher the user chose (WEFT_TEMPORAL_TEST_SERVER); it wins over the cache. */
  explicitPath?: string;
  cacheDir: string;
  log?: (msg: string) => void;
}

/** The path of an executable that starts the test server on the port given as its argument. */
export async function resolveTestServer(opts: ResolveTestServerOptions): Promise<string> {
  const log = opts.log ?? (() => {});
  if (opts.explicitPath) {
    const explicit = path.resolve(opts.explicitPath);
    if (!(await isExecutable(explicit))) {
      throw new InfraError(
        'infra_binary_unavailable',
        `temporal-test-server: the explicit path ${explicit} (${EXPLICIT_ENV}) does not exist or is not executable.`,
      );
    }
    return explicit;
  }

  const cacheDir = path.resolve(opts.cacheDir);
  const launcher = path.join(cacheDir, 'temporal-test-server');
  if (await isCurrentLauncher(launcher)) return launcher;

  await requireTool('java', ['-version'], 'Java (java, 11 or later)');
  await requireTool('mvn', ['--version'], 'Maven (mvn)');

  await mkdir(cacheDir, { recursive: true });
  const release = await acquireBuildLock(path.join(cacheDir, '.temporal-test-server.build.lock'), 'temporal-test-server', log);
  try {
    // Another run may have finished while this one waited for the lock.
    if (await isCurrentLauncher(launcher)) return launcher;
    const started = Date.now();
    log(`fetching ${artifactName()} and its dependencies from Maven into ${cacheDir}`);
    const libDir = path.join(cacheDir, `temporal-test-server-${TEST_SERVER_ARTIFACT.version}`);
    const workDir = await mkdtemp(path.join(cacheDir, '.build-temporal-test-server-'));
    try {
      const jarsDir = path.join(workDir, 'lib');
      await writeFile(path.join(workDir, 'pom.xml'), pom());
      const result = await run('mvn', ['-B', '-q', 'dependency:copy-dependencies', `-DoutputDirectory=${jarsDir}`, '-DincludeScope=runtime'], workDir);
      if (result.code !== 0 || !(await readdir(jarsDir).catch(() => [])).some((f) => f.startsWith(`${TEST_SERVER_ARTIFACT.artifactId}-`))) {
        throw new InfraError(
          'infra_binary_unavailable',
          `Maven could not fetch ${artifactName()} (exit ${result.code}); Maven Central must be reachable, or set ${EXPLICIT_ENV}.\nMaven output (tail):\n${tail(result.output)}`,
        );
      }
      // Jars first, launcher last: a launcher only ever points at a complete directory.
      await rm(libDir, { recursive: true, force: true });
      await rename(jarsDir, libDir);
      const tmpLauncher = path.join(workDir, 'launcher');
      await writeFile(tmpLauncher, launcherScript(libDir));
      await chmod(tmpLauncher, 0o755);
      await rename(tmpLauncher, launcher);
    } finally {
      await rm(workDir, { recursive: true, force: true });
    }
    log(`fetched temporal-test-server in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    return launcher;
  } finally {
    await release();
  }
}

function artifactName(): string {
  return `${TEST_SERVER_ARTIFACT.groupId}:${TEST_SERVER_ARTIFACT.artifactId}:${TEST_SERVER_ARTIFACT.version}`;
}

function pom(): string {
  const a = TEST_SERVER_ARTIFACT;
  return `<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>weft</groupId>
  <artifactId>weft-temporal-test-server</artifactId>
  <version>1</version>
  <dependencies>
    <dependency><groupId>${a.groupId}</groupId><artifactId>${a.artifactId}</artifactId><version>${a.version}</version></dependency>
    <dependency><groupId>${SLF4J_NOP.groupId}</groupId><artifactId>${SLF4J_NOP.artifactId}</artifactId><version>${SLF4J_NOP.version}</version></dependency>
  </dependencies>
</project>
`;
}

function launcherScript(libDir: string): string {
  // exec: the SDK stops the server by signalling the process it started, which must be the JVM.
  return `#!/bin/sh
${LAUNCHER_MARKER}
exec "\${JAVA_HOME:+$JAVA_HOME/bin/}java" -cp '${libDir}/*' ${MAIN_CLASS} "$@"
`;
}

async function isCurrentLauncher(file: string): Promise<boolean> {
  if (!(await isExecutable(file))) return false;
  const text = await readFile(file, 'utf8').catch(() => '');
  if (text.split('\n')[1] !== LAUNCHER_MARKER) return false;
  const libDir = /-cp '(.+)\/\*'/.exec(text)?.[1];
  return Boolean(libDir && (await readdir(libDir).catch(() => [])).some((f) => f.endsWith('.jar')));
}

async function requireTool(cmd: string, args: string[], what: string): Promise<void> {
  const result = await run(cmd, args, process.cwd()).catch((err: Error) => ({ code: -1, output: err.message }));
  if (result.code === 0) return;
  throw new InfraError(
    'infra_binary_unavailable',
    `temporal-test-server ${TEST_SERVER_ARTIFACT.version} is not in the cache and cannot be fetched: ${what} is not usable (${result.output.trim() || `exit ${result.code}`}). ` +
      `Install it, or set ${EXPLICIT_ENV} to an executable that runs ${MAIN_CLASS} with the port as its argument.`,
  );
}

function run(cmd: string, args: string[], cwd: string): Promise<{ code: number; output: string }> {
  return new Promise((resolve, reject) => {
    execFile(cmd, args, { cwd, env: childProcessEnv(), timeout: 20 * 60_000, maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
      if (err && (err as NodeJS.ErrnoException).code === 'ENOENT') return reject(new Error(`${cmd}: not found on PATH`));
      const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
      resolve({ code, output: `${stdout}${stderr}` });
    });
  });
}

async function isExecutable(file: string): Promise<boolean> {
  try {
    await access(file, fsConstants.X_OK);
    return true;
  } catch {
    return false;
  }
}
