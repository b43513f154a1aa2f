import { metrics, type Meter, type MeterProvider } from '@opentelemetry/api';

/**
 * Metric instruments made on first use from the global MeterProvider, and again if another
 * is installed. The metrics API has no proxy provider (unlike traces): instruments made
 * before app/telemetry.ts starts the SDK would be no-ops forever.
 */
export function lazyInstruments<T>(meterName: string, make: (meter: Meter) => T): () => T {
  let made: { provider: MeterProvider; instruments: T } | null = null;
  return () => {
    const provider = metrics.getMeterProvider();
    if (made?.provider !== provider) made = { provider, instruments: make(provider.getMeter(meterName)) };
    return made.instruments;
  };
}
