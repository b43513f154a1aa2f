import { InvalidArgumentError, type Command } from 'commander';

/** The command-line options of `npm start` / `weft start`. */
export interface StartOptions {
  /** Also start the sandbox simulators and point `dev` integrations at them. */
  sandbox: boolean;
  /** API port; overrides PORT. */
  port?: number;
  /** Luma simulator port (with --sandbox); default 3010, or a free one if 3010 is taken. */
  lumaPort?: number;
  /** Microsoft Graph simulator port (with --sandbox); default 3011. */
  graphPort?: number;
  /** GitHub simulator port (with --sandbox); default 3012. */
  githubPort?: number;
}

function parsePort(value: string): number {
  const port = Number(value);
  if (!/^\d+$/.test(value) || port > 65535) throw new InvalidArgumentError('expected a port number (0-65535).');
  return port;
}

/** Adds the start options to a commander command (shared by app/start/main.ts and `weft start`). */
export function addStartOptions(command: Command): Command {
  return command
    .option('--sandbox', 'also start the sandbox simulators and create the dev integrations that point at them', false)
    .option('--port <port>', 'API port (default: $PORT, else 3003; 0 = any free port)', parsePort)
    .option('--luma-port <port>', 'Luma simulator port with --sandbox (default 3010, else a free port)', parsePort)
    .option('--graph-port <port>', 'Microsoft Graph simulator port with --sandbox (default 3011, else a free port)', parsePort)
    .option('--github-port <port>', 'GitHub simulator port with --sandbox (default 3012, else a free port)', parsePort);
}
