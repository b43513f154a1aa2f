import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { InfraError, tail } from './errors';
import { childProcessEnv } from './infra-env';

/** Plain JS, so bare `node` can run it (no tsx in the supervisor's start-up path). */
const SUPERVISOR_SCRIPT = path.join(__dirname, 'supervisor.js');

export interface SupervisedProcessOptions {
  /** For messages: "temporal", "ferretdb". */
  name: string;
  command: string;
  args: string[];
  cwd?: string;
  /** The server's environment; defaults to this process's environment. */
  env?: NodeJS.ProcessEnv;
  /** SIGTERM → SIGKILL grace period on stop. */
  stopTimeoutMs?: number;
  /** Every chunk of the server's stdout/stderr, e.g. to forward to a logger. */
  onOutput?: (chunk: string) => void;
  /**
   * Whether the running server keeps this Node process alive. Off by default: a process that
   * forgot to stop its servers should still exit, and its supervisors then take the servers
   * down. (Start-up and stop() hold the process open regardless; awaiting `exited` alone does not.)
   */
  keepParentAlive?: boolean;
}

export interface ExitInfo {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface SupervisedProcess {
  /** The server's pid (also its process group id). */
  pid: number;
  supervisorPid: number;
  /** SIGTERM, then SIGKILL after the timeout; resolves once the server and supervisor are gone. Idempotent. */
  stop(): Promise<void>;
  /** Settles when the server has exited (for whatever reason). */
  exited: Promise<ExitInfo>;
  hasExited(): boolean;
  /** The last ~64 KB of stdout+stderr, for error messages. */
  recentOutput(): string;
}

const OUTPUT_LIMIT = 64 * 1024;

/** Starts `command` under the supervisor; resolves once the server process exists. */
export function startSupervisedProcess(opts: SupervisedProcessOptions): Promise<SupervisedProcess> {
  const stopTimeoutMs = opts.stopTimeoutMs ?? 10_000;
  const supervisorEnv = { ...(opts.env ?? childProcessEnv()) };
  // NODE_OPTIONS from a test runner or debugger (--inspect, --require) is meant for it, not the supervisor.
  delete supervisorEnv.NODE_OPTIONS;

  const supervisor = spawn(
    process.execPath,
    [SUPERVISOR_SCRIPT, JSON.stringify({ command: opts.command, args: opts.args, cwd: opts.cwd, graceMs: stopTimeoutMs })],
    { cwd: opts.cwd, env: supervisorEnv, stdio: ['pipe', 'pipe', 'pipe', 'pipe'] },
  );

  let output = '';
  const appendOutput = (chunk: Buffer) => {
    const text = chunk.toString();
    output += text;
    if (output.length > 2 * OUTPUT_LIMIT) output = output.slice(-OUTPUT_LIMIT);
    opts.onOutput?.(text);
  };
  supervisor.stdin!.on('error', () => {}); // EPIPE if the supervisor already exited
  supervisor.stdout!.on('data', appendOutput);
  supervisor.stderr!.on('data', appendOutput);
  const recentOutput = () => output.slice(-OUTPUT_LIMIT);

  let serverExit: ExitInfo | undefined;
  let exitedFlag = false;
  let resolveExited!: (info: ExitInfo) => void;
  const exited = new Promise<ExitInfo>((resolve) => (resolveExited = resolve));

  return new Promise<SupervisedProcess>((resolve, reject) => {
    let serverPid: number | undefined;
    let settled = false;
    const fail = (err: Error) => {
      if (settled) return;
      settled = true;
      reject(err);
    };

    readStatusLines(supervisor.stdio[3] as Readable, (message) => {
      if (message.event === 'spawned' && typeof message.pid === 'number') {
        serverPid = message.pid;
        if (!settled) {
          settled = true;
          // Held open while starting (the caller is awaiting us); idle afterwards unless asked.
          if (!opts.keepParentAlive) unrefAll(supervisor);
          resolve(handle(serverPid));
        }
      } else if (message.event === 'error') {
        fail(new InfraError('infra_process_failed', `Cannot start ${opts.name} (${opts.command}): ${String(message.message)}`));
      } else if (message.event === 'exit') {
        serverExit = { code: (message.code as number | null) ?? null, signal: (message.signal as NodeJS.Signals | null) ?? null };
      }
    });

    supervisor.on('error', (err) => fail(new InfraError('infra_process_failed', `Cannot start the supervisor for ${opts.name}: ${err.message}`)));

    // 'close' waits for the output pipes to drain (full output for error messages); the
    // timer covers a grandchild that inherited the pipe and keeps it open.
    let closeTimer: NodeJS.Timeout | undefined;
    const settleExit = () => {
      if (exitedFlag) return;
      exitedFlag = true;
      clearTimeout(closeTimer);
      // The supervisor died without reporting the server's exit (e.g. it was SIGKILLed on its
      // own): the server may still run, so take its group down from here.
      if (!serverExit && serverPid) killQuietly(-serverPid, 'SIGKILL');
      resolveExited(serverExit ?? { code: supervisor.exitCode, signal: supervisor.signalCode });
      fail(new InfraError('infra_process_failed', `${opts.name} exited before it started:\n${tail(recentOutput())}`));
    };
    supervisor.on('exit', () => {
      closeTimer = setTimeout(settleExit, 500);
    });
    supervisor.on('close', settleExit);
  });

  function handle(pid: number): SupervisedProcess {
    let stopping: Promise<void> | undefined;
    const stop = () => {
      stopping ??= (async () => {
        if (exitedFlag) return;
        // Closing stdin is exactly what the supervisor does on parent death: one shutdown path.
        (supervisor.stdin as Writable).end();
        // Backstop in case the supervisor itself is wedged. This timer is ref'd on purpose: it
        // keeps this process alive until the server is really gone.
        const backstop = setTimeout(() => {
          killQuietly(-pid, 'SIGKILL');
          killQuietly(supervisor.pid, 'SIGKILL');
        }, stopTimeoutMs + 5_000);
        try {
          await exited;
        } finally {
          clearTimeout(backstop);
        }
      })();
      return stopping;
    };
    return {
      pid,
      supervisorPid: supervisor.pid!,
      stop,
      exited,
      hasExited: () => exitedFlag,
      recentOutput,
    };
  }
}

function readStatusLines(stream: Readable, onMessage: (message: Record<string, unknown>) => void): void {
  let buffer = '';
  stream.on('data', (chunk: Buffer) => {
    buffer += chunk.toString();
    let newline: number;
    while ((newline = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, newline);
      buffer = buffer.slice(newline + 1);
      try {
        onMessage(JSON.parse(line) as Record<string, unknown>);
      } catch {
        // not ours; ignore
      }
    }
  });
  stream.on('error', () => {});
}

function unrefAll(child: ChildProcess): void {
  child.unref();
  for (const stream of child.stdio) {
    (stream as unknown as { unref?: () => void } | null)?.unref?.();
  }
}

function killQuietly(pid: number | undefined, signal: NodeJS.Signals): void {
  if (!pid) return;
  try {
    process.kill(pid, signal);
  } catch {
    // already gone
  }
}

export interface ReadinessWait {
  /** For messages: "FerretDB at mongodb://…". */
  what: string;
  /** The server's name in "… exited during start-up". */
  server: string;
  timeoutMs: number;
  /** One check, given how long it may take; resolves when the server is ready. */
  attempt: (attemptMs: number) => Promise<void>;
  /** Longest single attempt (default 5 s) and the pause between attempts (default 250 ms). */
  maxAttemptMs?: number;
  pauseMs?: number;
}

/**
 * Tries `attempt` until it succeeds, the server exits (infra_start_failed, with its output) or
 * the time is up (infra_start_timeout, with the last attempt's error and the output).
 */
export async function waitUntilReady(proc: SupervisedProcess, w: ReadinessWait): Promise<void> {
  const deadline = Date.now() + w.timeoutMs;
  let lastError = 'no attempt yet';
  while (Date.now() < deadline && !proc.hasExited()) {
    const outcome = await Promise.race([
      w.attempt(Math.min(w.maxAttemptMs ?? 5_000, Math.max(deadline - Date.now(), 100))).then(
        () => 'ready' as const,
        (err: Error) => err,
      ),
      proc.exited.then(() => 'exited' as const),
    ]);
    if (outcome === 'ready') return;
    if (outcome === 'exited') break;
    lastError = outcome.message;
    await new Promise((resolve) => setTimeout(resolve, w.pauseMs ?? 250));
  }
  if (proc.hasExited()) {
    const exit = await proc.exited;
    throw new InfraError(
      'infra_start_failed',
      `${w.server} exited during start-up (code ${exit.code}, signal ${exit.signal}). Output:\n${tail(proc.recentOutput())}`,
    );
  }
  throw new InfraError(
    'infra_start_timeout',
    `${w.what} was not ready within ${Math.round(w.timeoutMs / 1000)} s (last error: ${lastError}). Output:\n${tail(proc.recentOutput())}`,
  );
}
