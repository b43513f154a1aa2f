import type { SettingDoc } from '../../common/config';

/**
 * Environment variables Weft's code reads outside the two schemas (common/config.ts,
 * scripts/infra/infra-env.ts): the command-line tools', the container files', and those a
 * library reads for Weft (Temporal's environment configuration, OpenTelemetry's resource).
 * docs/configuration.md lists them with the schemas' settings; the configuration-reference
 * test fails when the code reads a variable that is in neither a schema nor this list.
 */
export interface VariableReadElsewhere extends SettingDoc {
  name: string;
  /** The file that reads it, relative to the repository, or the npm package that does. */
  readBy: string;
}

const temporalEnvconfig = '@temporalio/envconfig';
const sh = (name: string, description: string, readBy: string, more: Partial<SettingDoc> = {}): VariableReadElsewhere => ({
  name,
  group: 'deploy',
  description,
  readBy,
  ...more,
});

export const VARIABLES_READ_ELSEWHERE: VariableReadElsewhere[] = [
  // Temporal's environment configuration, read by the SDK over a TOML profile (common/temporal-settings.ts).
  {
    name: 'TEMPORAL_CONFIG_FILE',
    group: 'temporal',
    readBy: temporalEnvconfig,
    description: 'A TOML file of Temporal profiles; a path that does not exist stops the start.',
    whenUnset: '`~/.config/temporalio/temporal.toml` (if present)',
  },
  { name: 'TEMPORAL_PROFILE', group: 'temporal', readBy: temporalEnvconfig, description: 'The profile of that file to use.', whenUnset: '`default`' },
  { name: 'TEMPORAL_API_KEY', group: 'temporal', readBy: temporalEnvconfig, description: 'An API key (Temporal Cloud), sent as a bearer token; turns TLS on.' },
  {
    name: 'TEMPORAL_TLS',
    group: 'temporal',
    readBy: temporalEnvconfig,
    description: 'TLS without (or despite) the other TLS settings.',
    values: '`true` or `false`',
  },
  {
    name: 'TEMPORAL_TLS_CLIENT_CERT_PATH',
    group: 'temporal',
    readBy: temporalEnvconfig,
    description: 'Client certificate for mTLS, a PEM file (`TEMPORAL_TLS_CLIENT_CERT_DATA`: the PEM itself).',
  },
  { name: 'TEMPORAL_TLS_CLIENT_CERT_DATA', group: 'temporal', readBy: temporalEnvconfig, description: 'The client certificate as PEM text.' },
  { name: 'TEMPORAL_TLS_CLIENT_KEY_PATH', group: 'temporal', readBy: temporalEnvconfig, description: "The client certificate's private key, a PEM file." },
  { name: 'TEMPORAL_TLS_CLIENT_KEY_DATA', group: 'temporal', readBy: temporalEnvconfig, description: 'That private key as PEM text.' },
  {
    name: 'TEMPORAL_TLS_SERVER_CA_CERT_PATH',
    group: 'temporal',
    readBy: temporalEnvconfig,
    description: "The CA that signed the server's certificate, a PEM file (omit it for a public CA, as on Temporal Cloud).",
  },
  { name: 'TEMPORAL_TLS_SERVER_CA_CERT_DATA', group: 'temporal', readBy: temporalEnvconfig, description: 'That CA as PEM text.' },
  {
    name: 'TEMPORAL_TLS_SERVER_NAME',
    group: 'temporal',
    readBy: temporalEnvconfig,
    description: "The name to check the server's certificate against, when it differs from the address.",
  },
  {
    name: 'TEMPORAL_TLS_DISABLE_HOST_VERIFICATION',
    group: 'temporal',
    readBy: temporalEnvconfig,
    description: "`true` skips the check of the server certificate's host name (a test cluster only).",
  },
  { name: 'TEMPORAL_GRPC_META_<NAME>', group: 'temporal', readBy: temporalEnvconfig, description: 'An extra gRPC header `<name>` on every Temporal call.' },
  {
    name: 'OTEL_RESOURCE_ATTRIBUTES',
    group: 'telemetry',
    readBy: '@opentelemetry/resources',
    description: 'Extra resource attributes on traces and metrics (`key=value,…`); `OTEL_SERVICE_NAME` wins over a `service.name` here.',
  },

  // The command-line tools (cli/).
  {
    name: 'WEFT_KEY',
    group: 'cli',
    readBy: 'cli/weft.ts',
    description: 'The secret key `weft records` sends (an environment secret key, as `npm start` prints it).',
  },
  {
    name: 'WEFT_HOST',
    group: 'cli',
    readBy: 'cli/dryrun-target.ts',
    description: 'The Weft a dry run (`weft dryrun`) sends its calls through.',
    whenUnset: '`http://localhost:3003`',
  },
  { name: 'WEFT_SECRET_KEY_DEV', group: 'cli', readBy: 'cli/dryrun-target.ts', description: 'The `dev` environment secret key `weft dryrun -e dev` uses.' },
  { name: 'WEFT_SECRET_KEY_PROD', group: 'cli', readBy: 'cli/dryrun-target.ts', description: 'The `prod` environment secret key `weft dryrun -e prod` uses.' },
  {
    name: 'CI',
    group: 'cli',
    readBy: 'cli/dryrun-args.ts',
    description: 'When set, `weft dryrun` never asks for a missing argument (it fails naming it), even in a terminal.',
  },
  {
    name: 'WEFT_MOCK_LOG_LEVEL',
    group: 'cli',
    readBy: 'runtime/mocks/mock-context.ts',
    description: "Log level of an integration's own `ctx.log` lines while its saved mocks replay (`weft test`, the generated tests).",
    whenUnset: '`silent`',
  },

  // The container image and the compose deployment (deploy/).
  sh('WEFT_IMAGE', 'The Weft image the compose file runs.', 'deploy/compose.yaml', { whenUnset: '`weft:latest`' }),
  sh('NODE_IMAGE', 'The Node.js base image the Weft image is built on (`ARG` of deploy/Containerfile).', 'deploy/compose.yaml', {
    whenUnset: '`docker.io/library/node:20-bookworm-slim`',
  }),
  sh('WEFT_API_PORT', 'The host port the compose deployment publishes the API on.', 'deploy/compose.yaml', { whenUnset: '3003' }),
  sh('MONGODB_PASSWORD', "Password of the compose deployment's MongoDB user `weft` (required: `openssl rand -hex 16`).", 'deploy/compose.yaml'),
  sh('MONGODB_IMAGE', "The compose deployment's MongoDB image.", 'deploy/compose.yaml', { whenUnset: '`docker.io/library/mongo:7`' }),
  sh('TEMPORAL_DB_PASSWORD', "Password of the compose deployment's PostgreSQL, Temporal's database (required: `openssl rand -hex 16`).", 'deploy/compose.yaml'),
  sh('POSTGRES_IMAGE', "The compose deployment's PostgreSQL image.", 'deploy/compose.yaml', { whenUnset: '`docker.io/library/postgres:16`' }),
  sh('TEMPORAL_IMAGE', "The compose deployment's Temporal server image.", 'deploy/compose.yaml', { whenUnset: '`docker.io/temporalio/server:1.29.1`' }),
  sh('TEMPORAL_ADMINTOOLS_IMAGE', 'The Temporal admin-tools image that prepares its database and namespace.', 'deploy/compose.yaml', {
    whenUnset: '`docker.io/temporalio/admin-tools:1.29.1`',
  }),
  sh('WEFT_COMPOSE_PROJECT', 'The compose project name of the local image test (`npm run image:test`, deploy/local/).', 'deploy/local/up.sh', {
    whenUnset: '`weft-local`',
  }),
  sh('WEFT_IMAGE_CACHE', "Where deploy/local/ keeps the built base images' root and the generated `compose.env`.", 'deploy/local/env.sh', {
    whenUnset: '`${XDG_CACHE_HOME:-~/.cache}/weft/image`',
  }),
  sh('WEFT_IMAGE_CA_BUNDLE', 'The CA bundle copied into the locally built images.', 'deploy/local/build-images.sh', {
    whenUnset: '`/etc/ssl/certs/ca-certificates.crt`',
  }),
];
