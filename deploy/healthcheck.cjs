'use strict';
// The image's HEALTHCHECK (deploy/Containerfile): one image runs either `weft api` or `weft
// worker`, so this finds which by reading the command line of the container's weft process
// (PID 1, or a child of an init such as tini or catatonit) and checks that process.
//
//   weft api     GET http://127.0.0.1:$PORT/health answers 200 (MongoDB and Temporal reachable)
//   weft worker  the worker process is running (weft worker serves no HTTP endpoint yet)
//
// Exit 0: healthy; 1: unhealthy. Node's fetch, no curl in the image.
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

async function main() {
  const command = weftCommand();
  if (command === 'api') {
    const url = `http://127.0.0.1:${process.env.PORT || 3003}/health`;
    const res = await fetch(url, { signal: AbortSignal.timeout(TIMEOUT_MS) });
    if (res.status !== 200) throw new Error(`${url} answered ${res.status}: ${(await res.text()).slice(0, 200)}`);
    return;
  }
  if (command === 'worker') return;
  throw new Error(command ? `no health check for \`weft ${command}\`` : `no ${ENTRY} process in this container`);
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(`unhealthy: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  },
);
