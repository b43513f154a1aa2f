'use strict';
// The image's HEALTHCHECK (deploy/Containerfile). One image runs `weft api`, `weft worker` or
// `weft setup`, so this finds which from the command line of the container's weft process
// (PID 1, or a child of an init such as tini or catatonit) and asks that process's readiness:
//
//   weft api     GET http://127.0.0.1:$PORT/ready                      200: MongoDB and Temporal answer
//   weft worker  GET http://127.0.0.1:$WEFT_WORKER_HEALTH_PORT/ready   200: both Temporal workers run
//   weft setup   healthy while it runs (a one-shot: its exit code is what counts)
//
// Readiness rather than liveness (/health), because a container engine's health is what
// `depends_on: condition: service_healthy` and rolling updates wait for. An orchestrator with
// separate probes should send liveness to /health and readiness to /ready instead.
// Exit 0: healthy; 1: unhealthy. Node's fetch: there is no curl in the image.
// eslint-disable-next-line @typescript-eslint/no-require-imports -- CommonJS, run by plain node in the image
const { readdirSync, readFileSync } = require('node:fs');

const ENTRY = '/dist/cli/weft.js';
const TIMEOUT_MS = 4000;

function weftCommand() {
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    let argv;
    try {
      argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    } catch {
      continue; // gone meanwhile, or not ours to read
    }
    const at = argv.findIndex((arg) => arg.endsWith(ENTRY));
    if (at !== -1) return argv[at + 1] || 'api';
  }
  return undefined;
}

async function ready(port, setting) {
  if (!port) throw new Error(`${setting} is not set: no port to ask`);
  const url = `http://127.0.0.1:${port}/ready`;
  const res = await fetch(url, { signal: AbortSignal.timeout(TIMEOUT_MS) });
  if (res.status !== 200) throw new Error(`${url} answered ${res.status}: ${(await res.text()).slice(0, 300)}`);
}

async function main() {
  const command = weftCommand();
  if (command === 'api') return ready(process.env.PORT || '3003', 'PORT');
  if (command === 'worker') return ready(process.env.WEFT_WORKER_HEALTH_PORT, 'WEFT_WORKER_HEALTH_PORT');
  if (command === 'setup') return;
  throw new Error(command ? `no health check for \`weft ${command}\`` : `no ${ENTRY} process in this container`);
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(`unhealthy: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  },
);
