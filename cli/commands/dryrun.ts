import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import pc from 'picocolors';
import { WeftError } from '../../common/errors';
import { createLogger } from '../../common/logger';
import { integrations as prebuilt } from '../../integrations';
import { withIntegrationsDir } from '../../runtime/integration-loader';
import { IntegrationRegistry } from '../../runtime/registry';
import { ActionError, InvalidRecordError, ProviderHttpError } from '../../runtime/errors';
import { createProxyTransport } from '../../runtime/dryrun/proxy-transport';
import type { RecordedExchange } from '../../runtime/mocks/fixture-files';
import { redactValue, runDryRun, type DryRunResult } from '../../runtime/dryrun/run';
import type { ActionDefinition, SyncDefinition } from '../../runtime/types';
import { askFor, canPrompt, DryRunUsageError, parseJsonOption, parseLastSyncDate, parseMetadataOption } from '../dryrun-args';
import { DryRunProgress, printResult } from '../dryrun-output';
import { saveMocks } from '../dryrun-save';
import { resolveConnection, weftTarget } from '../dryrun-target';

interface DryRunFlags {
  environment: string;
  input?: string;
  lastSyncDate?: string;
  integrationId?: string;
  variant?: string;
  validate?: boolean;
  save?: boolean;
  metadata?: string;
  json?: boolean;
  project?: string;
}

export function registerDryrun(program: Command): void {
  program
    .command('dryrun')
    .description("Run a sync or action against an existing connection of a running Weft (its calls through Weft's /proxy); nothing is saved.")
    .argument('[function]', 'the sync or action name, e.g. list-events')
    .argument('[connection-id]', 'the connection to run it for')
    .option('-e, --environment <env>', 'dev or prod: picks WEFT_SECRET_KEY_DEV or WEFT_SECRET_KEY_PROD', 'dev')
    .option('--input <json>', 'action input: JSON, or @file.json')
    .option('--lastSyncDate <date>', 'last sync date for an incremental sync (default: none, a first run)')
    .option('--integration-id <key>', "the integration's unique key (inferred from the connection when only one has it)")
    .option('--variant <name>', 'run this variant of the sync', 'base')
    .option('--validate', 'validate action input and output and every record; the first failure halts the run')
    .option('--save', 'write the mock files under tests/mocks/ after a successful, validated run (implies --validate)')
    .option('--metadata <json>', 'connection metadata stub instead of the real one: JSON, or @file.json')
    .option('--json', 'print the result as one JSON document')
    .option('--project <dir>', 'the project folder (its integrations/ and tests/mocks/)', '.')
    .action(async (fnArg: string | undefined, connectionArg: string | undefined, flags: DryRunFlags) => {
      process.exitCode = await dryrunCommand(fnArg, connectionArg, flags);
      // `weft` exits as soon as the command returns, and writes to a pipe are asynchronous:
      // without this a large --json result reaches `| jq` cut off.
      await Promise.all([flushed(process.stdout), flushed(process.stderr)]);
    });
}

/** Resolves once everything written to `stream` so far is handed to the OS. */
function flushed(stream: NodeJS.WriteStream): Promise<void> {
  return new Promise((resolve) => stream.write('', () => resolve()));
}

/** The whole command; every failure ends here as one line (or the validation failure record) and exit code 1. */
async function dryrunCommand(fnArg: string | undefined, connectionArg: string | undefined, flags: DryRunFlags): Promise<number> {
  let progress: DryRunProgress | null = null;
  const secrets: string[] = [];
  try {
    const cwd = process.cwd();
    const projectDir = path.resolve(cwd, flags.project ?? '.');
    const target = weftTarget(process.env, flags.environment);
    secrets.push(target.secretKey);
    const input = flags.input !== undefined ? parseJsonOption('--input', flags.input, cwd) : undefined;
    const metadataStub = flags.metadata !== undefined ? parseMetadataOption(flags.metadata, cwd) : undefined;
    const lastSyncDate = flags.lastSyncDate !== undefined ? parseLastSyncDate(flags.lastSyncDate) : null;
    const validate = Boolean(flags.validate || flags.save);

    const registry = registryFor(projectDir);
    const fnName = fnArg ?? (await askFor('function', knownFunctions(registry)));
    if (!knownFunctions(registry).includes(fnName)) throw new DryRunUsageError(`Unknown function "${fnName}"; known: ${describeFunctions(registry)}.`);
    const connectionId = connectionArg ?? (await askFor('connection-id', null));

    const connection = await resolveConnection(target, connectionId, flags.integrationId);
    secrets.push(...connection.secrets);
    const integration = registry.get(connection.info.provider);
    const fn: SyncDefinition | ActionDefinition | undefined =
      integration?.syncs.find((s) => s.name === fnName) ?? integration?.actions.find((a) => a.name === fnName);
    if (!integration || !fn) {
      throw new DryRunUsageError(
        `"${fnName}" is not a function of ${connection.info.provider} (connection "${connectionId}" of ${connection.info.provider_config_key}); its functions: ${functionsOf(registry, connection.info.provider).join(', ')}.`,
      );
    }
    if (metadataStub) connection.info.metadata = metadataStub;

    // A terminal that reports no width (a bare pseudo-terminal) gets plain lines: ora would
    // clear lines without end there.
    const interactive = canPrompt() && !flags.json && Boolean(process.stderr.isTTY && process.stderr.columns);
    progress = new DryRunProgress(
      `dry run of ${fn.kind} ${fn.name} for ${connectionId} (${connection.info.provider_config_key}, ${target.environment})`,
      interactive,
    );
    const exchanges: RecordedExchange[] = [];
    const running = progress;
    const transport = createProxyTransport({
      weftHost: target.host,
      secretKey: target.secretKey,
      connectionId: connection.info.connection_id,
      providerConfigKey: connection.info.provider_config_key,
      defaultRetries: integration.provider.retries ?? 3,
      // The worker's client asks for JSON unless the provider's default headers say otherwise (GitHub's Accept), which the proxy adds.
      defaultHeaders: Object.keys(integration.provider.defaultHeaders ?? {}).some((h) => h.toLowerCase() === 'accept') ? {} : { accept: 'application/json' },
      onExchange: (exchange) => {
        exchanges.push(exchange);
        running.request();
      },
      onWait: (waitMs, reason) => running.line(`waiting ${Math.ceil(waitMs / 1000)} s before asking again: ${reason}`),
    });
    const result = await runDryRun({
      integration,
      fn,
      connection: connection.info,
      transport,
      validate,
      observer: progress.observer,
      logger: integrationLogger((line) => running.line(line), secrets),
      variant: flags.variant,
      lastSyncDate,
      input,
    });
    progress.succeed();
    progress = null;

    const shown = redactValue(result, secrets) as DryRunResult;
    if (flags.json) process.stdout.write(`${JSON.stringify(jsonResult(fn, connectionId, shown, exchanges.length))}\n`);
    else printResult(shown, process.stdout);

    if (flags.save) {
      const files = await saveMocks({
        projectDir,
        integration,
        registry,
        fn,
        connection: connection.info,
        exchanges,
        result,
        input,
        secrets,
      });
      process.stderr.write(`saved ${files.length} mock file(s) under ${path.relative(cwd, path.join(projectDir, 'tests', 'mocks')) || '.'}\n`);
    }
    return 0;
  } catch (err) {
    progress?.fail();
    reportFailure(err, secrets);
    return 1;
  }
}

/** Pre-built integrations, plus the project's own `integrations/` when the project is not Weft itself. */
function registryFor(projectDir: string): IntegrationRegistry {
  const own = isWeftRepo(projectDir);
  const dir = own ? process.env.WEFT_INTEGRATIONS_DIR : path.join(projectDir, 'integrations');
  if (!own && !existsSync(projectDir)) throw new DryRunUsageError(`--project ${projectDir} does not exist.`);
  // app/core's buildRegistry, without loading the core's drivers (a dry run needs none of them).
  return new IntegrationRegistry(withIntegrationsDir(prebuilt, dir && existsSync(dir) ? dir : undefined));
}

function isWeftRepo(dir: string): boolean {
  try {
    return (JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as { name?: string }).name === 'weft';
  } catch {
    return false;
  }
}

function functionsOf(registry: IntegrationRegistry, provider: string): string[] {
  const def = registry.get(provider);
  return def ? [...def.syncs, ...def.actions].map((f) => f.name) : [];
}

function knownFunctions(registry: IntegrationRegistry): string[] {
  return [...new Set(registry.providers().flatMap((p) => functionsOf(registry, p.name)))];
}

function describeFunctions(registry: IntegrationRegistry): string {
  return registry
    .providers()
    .map((p) => `${p.name}: ${functionsOf(registry, p.name).join(', ')}`)
    .join('; ');
}

function jsonResult(fn: SyncDefinition | ActionDefinition, connectionId: string, result: DryRunResult, requests: number): Record<string, unknown> {
  return {
    function: fn.name,
    kind: fn.kind,
    connection_id: connectionId,
    requests,
    ...(result.kind === 'action' ? { output: result.output } : {}),
    batchSave: result.writes.batchSave,
    batchDelete: result.writes.batchDelete,
    trackDeletes: result.writes.trackDeletes,
    ...(result.writes.metadataChanged ? { metadata: result.writes.metadata } : {}),
    checkpoint: result.writes.checkpoint,
  };
}

/** `ctx.log` lines of the function, shown above the progress (secrets scrubbed). */
function integrationLogger(print: (line: string) => void, secrets: string[]) {
  return createLogger('info', {
    write(line: string) {
      try {
        const { msg, level, time: _t, pid: _p, hostname: _h, service: _s, integrationLog: _i, ...fields } = JSON.parse(line) as Record<string, unknown>;
        const extra = Object.keys(fields).length ? ` ${JSON.stringify(redactValue(fields, secrets))}` : '';
        print(pc.dim(`log${Number(level) >= 40 ? ' (warn)' : ''}: ${redactValue(String(msg), secrets) as string}${extra}`));
      } catch {
        print(line.trimEnd());
      }
    },
  });
}

/**
 * One line on stderr for every failure; a validation failure also prints its failure record
 * (error code, details, the offending record), secrets redacted.
 */
function reportFailure(err: unknown, secrets: string[]): void {
  const line = (text: string): void => {
    process.stderr.write(`weft dryrun: ${redactValue(text, secrets) as string}\n`);
  };
  if (err instanceof InvalidRecordError || (err instanceof ActionError && /^invalid_action_(input|output)$/.test(err.code))) {
    line(err.message);
    const failure = { error: err.code, detail: err.details, ...(err instanceof InvalidRecordError ? { record: redactValue(err.record, secrets) } : {}) };
    process.stderr.write(`${JSON.stringify(failure, null, 2)}\n`);
    return;
  }
  if (err instanceof DryRunUsageError) return line(err.message);
  if (err instanceof ProviderHttpError) {
    const body = err.providerBody as { message?: unknown; error?: { message?: unknown } | string; error_description?: unknown } | null;
    const reason = [body?.error_description, typeof body?.error === 'object' ? body.error?.message : body?.error, body?.message].find(
      (m): m is string => typeof m === 'string',
    );
    return line(`the provider answered HTTP ${err.providerStatus}: ${err.message}${reason ? ` (${reason.slice(0, 200)})` : ''}`);
  }
  if (err instanceof WeftError) return line(`${err.message} (${err.code})`);
  // The function's own failure (a bug in integration code): its message, no stack.
  line(`the function failed: ${err instanceof Error ? `${err.name}: ${err.message}` : String(err)}`);
}
