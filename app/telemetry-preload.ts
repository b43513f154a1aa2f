/**
 * Imported first by every process entry (cli/weft.ts, app/start/main.ts, app/api/main.ts,
 * app/worker/main.ts), before anything requires `mongodb`: OpenTelemetry's MongoDB
 * instrumentation can only patch the driver as it loads. Reads the OTEL_* variables alone; a
 * bad value is left for loadConfig to report at start, with every other setting.
 */
import { loadTelemetryConfig } from '../common/config';
import { instrumentMongoDbOnLoad } from './telemetry';

const config = loadTelemetryConfig(process.env);
if (config) instrumentMongoDbOnLoad(config);
