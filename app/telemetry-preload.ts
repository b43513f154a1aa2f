/**
 * Imported first by every process entry (cli/weft.ts, app/start/main.ts, app/api/main.ts,
 * app/worker/main.ts), before anything requires `mongodb`: OpenTelemetry's MongoDB
 * instrumentation can only patch the driver as it loads. Reads the OTEL_* variables alone; a
 * bad value is left for loadConfig to report at start, with every other setting.
 */
import { loadTelemetryConfig } from '../common/config';
import type { instrumentMongoDbOnLoad } from './telemetry';

const config = loadTelemetryConfig(process.env);
// The OpenTelemetry SDK (~400 modules) is loaded only when an OTLP endpoint is set (the rest
// of the rules are instrumentMongoDbOnLoad's): every `weft` command starts here, and
// `weft dryrun` or `weft --help` should not pay for it.
const endpointSet = Boolean(config?.OTEL_EXPORTER_OTLP_ENDPOINT || config?.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
// eslint-disable-next-line @typescript-eslint/no-require-imports
if (config && endpointSet) (require('./telemetry') as { instrumentMongoDbOnLoad: typeof instrumentMongoDbOnLoad }).instrumentMongoDbOnLoad(config);
