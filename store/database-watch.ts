import type { MongoClient } from 'mongodb';

/** What the watch reports; the composition root passes its logger. */
export interface DatabaseWatchLog {
  warn(fields: Record<string, unknown>, msg: string): void;
  info(fields: Record<string, unknown>, msg: string): void;
  error(fields: Record<string, unknown>, msg: string): void;
}

export interface DatabaseWatch {
  stop(): void;
}

/**
 * Says when the database becomes unreachable and when it is back, and repairs the one case the
 * driver does not: a server monitor that stops checking.
 *
 * While the server is unknown the driver's monitor re-checks it every half second, and the
 * first successful check makes it selectable again. In two CI runs out of many the API stayed
 * unavailable for more than 15 s after FerretDB was back, the topology still describing the
 * pool error that had marked the server unknown: no check had finished since. If the server
 * has been unknown and no heartbeat has started or ended for `stallMs`, the watch closes the
 * client and connects it again (the Db and Collection objects the stores hold keep working:
 * they refer to the client, which builds a new topology with a new monitor).
 */
export function watchDatabase(client: MongoClient, opts: { heartbeatFrequencyMs: number; stallMs?: number; log: DatabaseWatchLog }): DatabaseWatch {
  const stallMs = opts.stallMs ?? Math.max(3 * opts.heartbeatFrequencyMs, 10_000);
  let unknownSince: number | null = null;
  let lastHeartbeat = Date.now();
  let reconnecting = false;
  let stopped = false;

  const onHeartbeat = () => {
    lastHeartbeat = Date.now();
  };
  const onDescription = (event: { newDescription: { type: string; error?: { message?: string } | null } }) => {
    const unknown = event.newDescription.type === 'Unknown';
    if (unknown && unknownSince === null) {
      unknownSince = Date.now();
      opts.log.warn({ dependency: 'database', cause: event.newDescription.error?.message }, 'database unreachable');
    } else if (!unknown && unknownSince !== null) {
      opts.log.info({ dependency: 'database', downMs: Date.now() - unknownSince }, 'database reachable again');
      unknownSince = null;
    }
  };
  client.on('serverHeartbeatStarted', onHeartbeat);
  client.on('serverHeartbeatSucceeded', onHeartbeat);
  client.on('serverHeartbeatFailed', onHeartbeat);
  client.on('serverDescriptionChanged', onDescription);

  const timer = setInterval(
    () => {
      if (stopped || reconnecting || unknownSince === null) return;
      const silentMs = Date.now() - lastHeartbeat;
      if (silentMs < stallMs) return;
      reconnecting = true;
      opts.log.error({ dependency: 'database', silentMs }, 'database monitor stalled: reconnecting the client');
      void (async () => {
        try {
          await client.close();
          if (!stopped) await client.connect();
        } catch (err) {
          // Still unreachable: the next tick tries again once the new monitor has been silent as long.
          opts.log.warn({ dependency: 'database', cause: (err as Error).message }, 'database reconnect failed');
        } finally {
          lastHeartbeat = Date.now();
          reconnecting = false;
        }
      })();
    },
    Math.min(1_000, stallMs),
  );
  timer.unref();

  return {
    stop() {
      stopped = true;
      clearInterval(timer);
      client.off('serverHeartbeatStarted', onHeartbeat);
      client.off('serverHeartbeatSucceeded', onHeartbeat);
      client.off('serverHeartbeatFailed', onHeartbeat);
      client.off('serverDescriptionChanged', onDescription);
    },
  };
}
