import dns from 'node:dns';
import type { LookupFunction } from 'node:net';
import { buildConnector } from 'undici';
import type { AddressPolicy, EgressRefusal } from './address-policy';
import { parseAddress } from './address-policy';
import { EgressRefusedError } from './errors';

type Resolve = (hostname: string, callback: (err: NodeJS.ErrnoException | null, addresses: dns.LookupAddress[]) => void, options: dns.LookupOptions) => void;

const systemResolve: Resolve = (hostname, callback, options) => dns.lookup(hostname, { ...options, all: true }, callback);

/**
 * An undici connector that applies the address policy to the address each socket actually
 * connects to: IP literals are checked before connecting (the resolver never sees them),
 * names in the `lookup` that Node's net/tls call with the resolver's answer. Refused
 * addresses are dropped from that answer; when none is left the connection fails with
 * EgressRefusedError before any packet leaves, so a name that resolves (or re-resolves,
 * DNS rebinding) to a private address gets nowhere.
 */
export function guardedConnector(policy: AddressPolicy, opts: { connectTimeoutMs: number; resolve?: Resolve }): buildConnector.connector {
  // `lookup` is fixed when a connector is built and is not told the port, which host:port
  // allow entries need: one connector per scheme and port (a handful in practice).
  const connectors = new Map<string, buildConnector.connector>();
  const connectorFor = (protocol: string, port: number) => {
    const key = `${protocol}${port}`;
    let connector = connectors.get(key);
    if (!connector) {
      connector = buildConnector({ timeout: opts.connectTimeoutMs, lookup: checkedLookup(policy, port, opts.resolve ?? systemResolve) });
      connectors.set(key, connector);
    }
    return connector;
  };

  return (options, callback) => {
    const port = Number(options.port) || (options.protocol === 'https:' ? 443 : 80);
    const hostname = options.hostname.replace(/^\[(.*)\]$/, '$1');
    if (parseAddress(hostname)) {
      const refusal = policy.check({ host: hostname, address: hostname, port });
      if (refusal) {
        process.nextTick(() => callback(new EgressRefusedError(refusal, 424), null));
        return;
      }
    }
    connectorFor(options.protocol, port)(options, callback);
  };
}

function checkedLookup(policy: AddressPolicy, port: number, resolve: Resolve): LookupFunction {
  return (hostname, options, callback) => {
    resolve(
      hostname,
      (err, addresses) => {
        if (err) return callback(err, '', 0);
        let refusal: EgressRefusal | null = null;
        const permitted = addresses.filter((a) => {
          const r = policy.check({ host: hostname, address: a.address, port });
          refusal ??= r;
          return r === null;
        });
        if (permitted.length === 0) {
          const error = refusal
            ? new EgressRefusedError(refusal, 424)
            : Object.assign(new Error(`${hostname} did not resolve to any address`), { code: 'ENOTFOUND' });
          return callback(error, '', 0);
        }
        if (options.all) return (callback as unknown as (e: null, a: dns.LookupAddress[]) => void)(null, permitted);
        callback(null, permitted[0].address, permitted[0].family);
      },
      options,
    );
  };
}
