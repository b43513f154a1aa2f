'use strict';
/**
 * Runs one server process so that it can never outlive the process that wanted it.
 *
 * Usage: node supervisor.js '<json {command, args, cwd, graceMs}>'
 *
 * The parent holds the write end of this process's stdin. The kernel closes that pipe when
 * the parent exits for any reason, SIGKILL included, and there is no way to miss it; so
 * "stdin ended" is the single stop signal: the server's process group gets SIGTERM, then
 * SIGKILL after graceMs. The server runs in its own process group (detached) so the whole
 * group, including anything it forks, can be signalled at once, and so a terminal's Ctrl-C
 * reaches the parent (which stops things in order) rather than the server directly.
 *
 * fd 3 carries one JSON line per event to the parent: {"event":"spawned","pid"},
 * {"event":"error","message","code"}, {"event":"exit","code","signal"}.
 *
 * Plain JavaScript on purpose: it must start with bare `node`, without tsx.
 */
const { spawn } = require('node:child_process');
const net = require('node:net');

const config = JSON.parse(process.argv[2] || '{}');
const graceMs = Number(config.graceMs) > 0 ? Number(config.graceMs) : 10000;

let status;
try {
  status = new net.Socket({ fd: 3, readable: false, writable: true });
  status.on('error', () => {}); // the parent may already be gone; nothing to report to then
} catch {
  status = undefined;
}

function send(message) {
  if (status && !status.destroyed) status.write(JSON.stringify(message) + '\n');
}

let child;
let childExited = false;
let stopping = false;
let killTimer;

function signalGroup(signal) {
  if (!child || !child.pid || childExited) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // ESRCH: the group is already gone.
  }
}

function stop() {
  if (stopping) return;
  stopping = true;
  if (!child || !child.pid) return; // spawn still pending; 'spawn' handler sees `stopping`
  signalGroup('SIGTERM');
  killTimer = setTimeout(() => signalGroup('SIGKILL'), graceMs);
}

function finish(exitCode, message) {
  clearTimeout(killTimer);
  send(message);
  const exit = () => process.exit(exitCode);
  if (status && !status.destroyed) status.end(exit);
  // If the parent is gone the flush may never complete; do not linger.
  setTimeout(exit, 1000);
}

try {
  child = spawn(config.command, config.args || [], {
    cwd: config.cwd || undefined,
    env: process.env,
    detached: true,
    stdio: ['ignore', 'inherit', 'inherit'],
  });
} catch (err) {
  finish(127, { event: 'error', message: String(err && err.message), code: err && err.code });
  return;
}

child.on('spawn', () => {
  send({ event: 'spawned', pid: child.pid });
  if (stopping) {
    stopping = false;
    stop();
  }
});

child.on('error', (err) => {
  if (childExited) return;
  childExited = true;
  finish(127, { event: 'error', message: err.message, code: err.code });
});

child.on('exit', (code, signal) => {
  // Anything the server forked dies with it.
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    // nothing left
  }
  childExited = true;
  const signalNumber = signal ? require('node:os').constants.signals[signal] || 0 : 0;
  finish(code !== null ? code : 128 + signalNumber, { event: 'exit', code, signal });
});

process.stdin.on('end', stop);
process.stdin.on('close', stop);
process.stdin.on('error', stop);
process.stdin.resume();

// SIGTERM/SIGHUP to the supervisor mean "stop the server". SIGINT is ignored: Ctrl-C goes to
// the whole foreground group, and the parent decides how to shut down (closing our stdin).
process.on('SIGTERM', stop);
process.on('SIGHUP', stop);
process.on('SIGINT', () => {});
