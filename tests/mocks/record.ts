/**
 * `npm run mocks:record`: records the mocks of every pre-built function against the sandbox
 * simulators and regenerates their snapshot tests, as an integration author
 * would: a Weft stack with the simulators, one connection per integration, then for each
 * function `weft dryrun <fn> <connection> --save` (spawned, through the running Weft's
 * /proxy), then `weft generate:tests`. The simulators are seeded and small, so the files stay
 * readable; commit what it writes (tests/mocks/<integration>/, tests/integrations/<integration>/).
 *
 * `npm run mocks:record -- <integration>[/<function>] ...` records only those.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import {
  connectGitHub,
  connectOneDrive,
  createGitHubIntegration,
  createLumaIntegration,
  createOneDriveIntegration,
  startWeftStack,
  type WeftStack,
} from '../support/weft-stack';
import { startStandaloneTestInfra } from '../support/standalone-infra';
import { GRAPH_DEFAULT_ACCESS_TOKEN } from '../../sandbox/graph';

const REPO = path.resolve(__dirname, '..', '..');
const BIN = path.join(REPO, 'cli', 'bin.js');
const LUMA_API_KEY = 'sandbox-luma-api-key';

/**
 * What makes a second run write the same bytes: the simulators on fixed ports (their URLs are
 * in response bodies, `link` headers and the ETags GitHub derives from bodies), Luma's and
 * Graph's on a frozen clock (timestamps of written items, `x-ratelimit-reset`, session
 * expiries; the instant is ahead of any real clock, so what they issue stays valid for Weft).
 * GitHub's keeps the real clock: it checks the App JWT Weft signs against it, so its
 * `x-ratelimit-reset` and the time update-pull-request writes still change from run to run.
 */
/** Below Linux's ephemeral range (32768-60999), so no port-0 listener of the run takes them first. */
const SIMULATOR_PORTS = { luma: 30_311, graph: 30_312, github: 30_313 };
const RECORDING_INSTANT = Date.parse('2030-01-01T09:00:00.000Z');
const frozenClock = (): number => RECORDING_INSTANT;

interface Recording {
  integration: string;
  functionName: string;
  connection: string;
  input?: unknown;
  metadata?: unknown;
}

/** What each function is run with: the simulators' own ids, read once the stack is up. */
function recordings(stack: WeftStack): Recording[] {
  const drive = stack.graph.drives()[0].id as string;
  const files = stack.graph.items(drive).filter((i) => i.file !== undefined);
  const repository = stack.github.repositories(1001)[0].full_name as string;
  const pull = stack.github.pullRequests(repository)[0].number as number;
  return [
    { integration: 'luma', functionName: 'list-events', connection: 'mocks-luma' },
    {
      integration: 'luma',
      functionName: 'create-event',
      connection: 'mocks-luma',
      input: { name: 'Recorded for the mocks', start_at: '2027-03-01T17:00:00.000Z', timezone: 'Europe/Berlin', duration_interval: 'PT2H' },
    },
    { integration: 'one-drive', functionName: 'user-files', connection: 'mocks-drive' },
    {
      integration: 'one-drive',
      functionName: 'user-files/selected',
      connection: 'mocks-drive',
      metadata: { pickedFiles: [{ driveId: drive, fileIds: files.slice(0, 2).map((f) => f.id) }] },
    },
    { integration: 'one-drive', functionName: 'list-drives', connection: 'mocks-drive', input: {} },
    { integration: 'one-drive', functionName: 'team-site-token', connection: 'mocks-drive-teamsite', input: {} },
    { integration: 'one-drive', functionName: 'fetch-file', connection: 'mocks-drive', input: { driveId: drive, itemId: files[0].id } },
    {
      integration: 'one-drive',
      functionName: 'upload-file',
      connection: 'mocks-drive',
      input: {
        driveId: drive,
        fileName: 'recorded-for-the-mocks.txt',
        content: Buffer.from('Recorded for the mocks.\n').toString('base64'),
        conflictBehavior: 'replace',
      },
    },
    {
      integration: 'one-drive',
      functionName: 'create-folder',
      connection: 'mocks-drive',
      input: { driveId: drive, name: 'Recorded for the mocks', conflictBehavior: 'replace' },
    },
    { integration: 'github', functionName: 'repositories', connection: 'mocks-github' },
    { integration: 'github', functionName: 'pull-requests', connection: 'mocks-github' },
    { integration: 'github', functionName: 'commits', connection: 'mocks-github' },
    {
      integration: 'github',
      functionName: 'update-pull-request',
      connection: 'mocks-github',
      input: { repository, pull_number: pull, title: 'Retitled for the mocks' },
    },
  ];
}

function weft(args: string[], env: Record<string, string>): Promise<{ ok: boolean; output: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args], { cwd: REPO, env: { ...process.env, ...env }, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) =>
      resolve({ ok: !err, output: `${stdout}${stderr}`.trim() }),
    );
  });
}

async function main(): Promise<void> {
  const only = process.argv.slice(2);
  const infra = await startStandaloneTestInfra('mocks', (m) => process.stderr.write(`[infra] ${m}\n`));
  let stack: WeftStack | undefined;
  let failed = 0;
  try {
    stack = await startWeftStack({
      luma: { seed: 11, eventCount: 60, maxPageSize: 25, defaultPageSize: 25, now: frozenClock },
      graph: { seed: 11, drives: [{ fileCount: 12 }], maxPageSize: 5, defaultPageSize: 5, now: frozenClock },
      github: {
        seed: 11,
        installations: [{ id: 1001, account: { login: 'sandbox-org', type: 'Organization' }, repositoryCount: 2 }],
        pullsPerRepo: 3,
        commitsPerPull: [1, 3],
      },
      worker: false,
      simulatorPorts: SIMULATOR_PORTS,
      temporalCallTimeoutMs: 10_000,
    });
    await createLumaIntegration(stack);
    await createOneDriveIntegration(stack);
    await createGitHubIntegration(stack);
    const luma = await stack.api('POST', '/connections', {
      body: { provider_config_key: 'luma', connection_id: 'mocks-luma', credentials: { type: 'API_KEY', apiKey: LUMA_API_KEY } },
    });
    // The SharePoint token the file picker needs comes from an OAuth connect with Sites.Read.All;
    // an imported connection carries one in its connection_config instead.
    const teamsite = await stack.api('POST', '/connections', {
      body: {
        provider_config_key: 'one-drive',
        connection_id: 'mocks-drive-teamsite',
        credentials: { type: 'OAUTH2', access_token: GRAPH_DEFAULT_ACCESS_TOKEN },
        connection_config: { teamsiteAccessToken: 'sandbox-teamsite-token-for-the-mocks', teamsiteAccessTokenExpiresAt: '2030-01-01T00:00:00.000Z' },
      },
    });
    for (const res of [luma, teamsite, await connectOneDrive(stack, 'mocks-drive'), await connectGitHub(stack, 'mocks-github')]) {
      if (res.status !== 201) throw new Error(`creating a connection failed: ${res.status} ${JSON.stringify(res.body)}`);
    }

    const env = { WEFT_HOST: stack.apiUrl, WEFT_SECRET_KEY_DEV: stack.keys.dev, CI: '1', NO_COLOR: '1' };
    for (const r of recordings(stack)) {
      if (only.length && !only.some((o) => o === r.integration || o === `${r.integration}/${r.functionName}`)) continue;
      const args = ['dryrun', r.functionName, r.connection, '--integration-id', r.integration, '--save', '--project', REPO];
      if (r.input !== undefined) args.push('--input', JSON.stringify(r.input));
      if (r.metadata !== undefined) args.push('--metadata', JSON.stringify(r.metadata));
      const result = await weft(args, env);
      const last = result.output.split('\n').pop();
      process.stdout.write(`${result.ok ? 'recorded' : 'FAILED  '} ${r.integration}/${r.functionName}: ${last}\n`);
      if (!result.ok) {
        failed += 1;
        process.stdout.write(`${result.output}\n`);
      }
    }
    const generated = await weft(['generate:tests', '--project', REPO], {});
    process.stdout.write(`${generated.output}\n`);
    if (!generated.ok) failed += 1;
  } finally {
    await stack?.shutdown();
    await infra.stop();
  }
  process.exitCode = failed ? 1 : 0;
}

main().then(
  () => process.exit(process.exitCode ?? 0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
