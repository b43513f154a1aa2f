import { existsSync, readFileSync } from 'node:fs';
import { loadClientConfigProfile, type ClientConfigProfile, type ClientConfigTLS } from '@temporalio/envconfig';

/**
 * How Weft reaches Temporal, read the way Temporal's own CLI and SDKs read it (environment
 * configuration): a profile of a TOML file (`TEMPORAL_CONFIG_FILE`, else
 * `~/.config/temporalio/temporal.toml`; `TEMPORAL_PROFILE`, else `default`) overridden by the
 * `TEMPORAL_*` variables (`TEMPORAL_ADDRESS`, `TEMPORAL_NAMESPACE`, `TEMPORAL_API_KEY`,
 * `TEMPORAL_TLS`, `TEMPORAL_TLS_CLIENT_CERT_PATH` / `_DATA`, `TEMPORAL_TLS_CLIENT_KEY_PATH` /
 * `_DATA`, `TEMPORAL_TLS_SERVER_CA_CERT_PATH` / `_DATA`, `TEMPORAL_TLS_SERVER_NAME`,
 * `TEMPORAL_GRPC_META_*`). The SDK's @temporalio/envconfig does the reading, so a profile that
 * works for `temporal workflow list` works for Weft.
 *
 * Certificates stay file paths (or inline data) here; they are read when the process connects
 * (app/temporal-connection.ts), never logged, and never part of an error message.
 */
export interface TemporalSettings {
  /** host:port of the frontend; absent when neither the profile nor TEMPORAL_ADDRESS names one. */
  address?: string;
  namespace: string;
  /** Sent as `Authorization: Bearer …` (Temporal Cloud API keys); implies TLS. */
  apiKey?: string;
  tls?: ClientConfigTLS;
  /** Extra gRPC metadata on every call (`TEMPORAL_GRPC_META_<NAME>`). */
  grpcMeta?: Record<string, string>;
  /** The profile the settings came from (for messages). */
  profile: string;
}

const DEFAULT_NAMESPACE = 'default';

/**
 * Reads Temporal's environment configuration from `env`. A profile named by TEMPORAL_PROFILE
 * that the file does not have, an unreadable TOML or an unknown key in it throws (the caller
 * reports it as a configuration error); a missing default file is no error.
 */
export function loadTemporalSettings(env: NodeJS.ProcessEnv): TemporalSettings {
  // An exported-but-empty variable means "unset", as for every other Weft setting.
  const vars = Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => typeof e[1] === 'string' && e[1] !== ''));
  let profile: ClientConfigProfile;
  try {
    profile = loadClientConfigProfile({ overrideEnvVars: vars, ...explicitFile(vars.TEMPORAL_CONFIG_FILE) });
  } catch (err) {
    // A TOML syntax error's message quotes the offending line, which may hold an API key: only its position.
    const position = err as { line?: unknown; column?: unknown };
    if (typeof position.line === 'number') throw new Error(`the TOML file is not valid TOML (line ${position.line}, column ${String(position.column)})`);
    throw err;
  }
  return {
    address: profile.address || undefined,
    namespace: profile.namespace || DEFAULT_NAMESPACE,
    apiKey: profile.apiKey || undefined,
    tls: profile.tls,
    grpcMeta: profile.grpcMeta && Object.keys(profile.grpcMeta).length > 0 ? profile.grpcMeta : undefined,
    profile: vars.TEMPORAL_PROFILE ?? 'default',
  };
}

/**
 * A file named by TEMPORAL_CONFIG_FILE is read here: the SDK treats a missing file as no file,
 * which would hide a mistyped path, and fails on an empty one (/dev/null: "no profiles").
 */
function explicitFile(file: string | undefined): { configSource: { data: string } } | { disableFile: true } | object {
  if (!file) return {};
  if (!existsSync(file)) throw new Error(`TEMPORAL_CONFIG_FILE ${file} does not exist`);
  const data = readFileSync(file, 'utf8');
  const meaningful = data.split('\n').some((line) => line.trim() !== '' && !line.trim().startsWith('#'));
  return meaningful ? { configSource: { data } } : { disableFile: true };
}

/** Whether the settings ask for TLS: an explicit TLS table that is not disabled, or an API key. */
export function usesTls(settings: Pick<TemporalSettings, 'apiKey' | 'tls'>): boolean {
  if (settings.tls) return settings.tls.disabled !== true;
  return settings.apiKey !== undefined;
}

/**
 * The environment for a child process that must reach a Temporal dev server started here
 * (plain TCP, no key): the caller's other TEMPORAL_* settings (a TLS profile, an API key meant
 * for another cluster) and its profile file are left out.
 */
export function devServerTemporalEnv(env: NodeJS.ProcessEnv, address: string, namespace: string): NodeJS.ProcessEnv {
  const rest = Object.fromEntries(Object.entries(env).filter(([name]) => !name.startsWith('TEMPORAL_')));
  return { ...rest, TEMPORAL_ADDRESS: address, TEMPORAL_NAMESPACE: namespace, TEMPORAL_CONFIG_FILE: '/dev/null' };
}
