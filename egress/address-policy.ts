import ipaddr from 'ipaddr.js';
import { ConfigError } from '../common/errors';

/**
 * Which addresses Weft may connect to. Only globally routable unicast addresses pass by
 * default; everything else (loopback, private, link-local, metadata services, multicast,
 * CGNAT, reserved ...) is refused unless an allow-list entry names it. IPv6 forms that
 * carry an IPv4 address (IPv4-mapped `::ffff:a.b.c.d`, IPv4-translated, NAT64
 * `64:ff9b::a.b.c.d`) are judged by the IPv4 address inside them.
 */

/** A refused address range: a stable rule name and what it covers, for error messages. */
export interface RefusedRange {
  rule: string;
  description: string;
}

/**
 * Cloud instance-metadata endpoints (AWS, GCP, Azure, Oracle: 169.254.169.254 and
 * 192.0.0.192; AWS IPv6: fd00:ec2::254; Alibaba: 100.100.100.200). They sit in ranges
 * refused anyway; naming them gives a clearer message, and a broad allow-list CIDR does
 * not unlock them (only an entry naming the exact address does).
 */
const METADATA_ADDRESSES = new Set(['169.254.169.254', '192.0.0.192', '100.100.100.200', 'fd00:ec2::254']);

const RANGE_DESCRIPTIONS: Record<string, string> = {
  metadata: 'cloud instance metadata service',
  loopback: 'loopback: 127.0.0.0/8, ::1',
  private: 'private network: 10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16',
  uniqueLocal: 'unique local IPv6: fc00::/7',
  linkLocal: 'link-local: 169.254.0.0/16, fe80::/10',
  deprecatedSiteLocal: 'IPv6 site-local: fec0::/10',
  unspecified: 'unspecified: 0.0.0.0/8, ::',
  broadcast: 'broadcast: 255.255.255.255',
  multicast: 'multicast: 224.0.0.0/4, ff00::/8',
  carrierGradeNat: 'carrier-grade NAT: 100.64.0.0/10',
};

/** The refused range `address` (an IP literal) falls in, or null when it is public unicast. */
export function refusedRangeOf(address: string): RefusedRange | null {
  const ip = parseAddress(address);
  if (!ip) return { rule: 'invalid', description: 'not an IP address' };
  const normalized = ip.toNormalizedString();
  if (METADATA_ADDRESSES.has(ip.kind() === 'ipv6' ? (ip as ipaddr.IPv6).toRFC5952String() : normalized)) return describe('metadata');
  const range = ip.range();
  if (range === 'unicast') return null;
  return describe(range);
}

function describe(rule: string): RefusedRange {
  return { rule, description: RANGE_DESCRIPTIONS[rule] ?? `special-purpose range ${rule}` };
}

/**
 * Parses an IP literal (brackets and zone ids allowed) and unwraps IPv4 carried inside
 * IPv6, so that `::ffff:127.0.0.1` and `64:ff9b::7f00:1` are judged as 127.0.0.1.
 */
export function parseAddress(address: string): ipaddr.IPv4 | ipaddr.IPv6 | null {
  const bare = address.replace(/^\[(.*)\]$/, '$1').replace(/%.*$/, '');
  if (!ipaddr.isValid(bare)) return null;
  // isValid accepts shorthand IPv4 ("127.1", "0x7f.1"); the resolver does too, so judge them the same way.
  const ip = ipaddr.parse(bare);
  if (ip.kind() === 'ipv4') return ip;
  const v6 = ip as ipaddr.IPv6;
  const range = v6.range();
  if (range === 'ipv4Mapped' || range === 'rfc6145' || (range === 'rfc6052' && v6.match(ipaddr.IPv6.parse('64:ff9b::'), 96))) {
    const bytes = v6.toByteArray();
    return ipaddr.fromByteArray(bytes.slice(12)) as ipaddr.IPv4;
  }
  return v6;
}

/** One entry of an allow-list variable (WEFT_EGRESS_ALLOW_PROVIDERS, ...). */
export type AllowRule =
  | { kind: 'cidr'; text: string; range: [ipaddr.IPv4 | ipaddr.IPv6, number]; exact: boolean }
  | { kind: 'host-port'; text: string; host: string; address: ipaddr.IPv4 | ipaddr.IPv6 | null; port: number };

/** Thrown at start-up for an allow-list entry that is not a CIDR, an IP or host:port. */
export class InvalidAllowEntryError extends ConfigError {
  constructor(
    readonly entry: string,
    readonly variable: string,
  ) {
    super(`${variable}: "${entry}" is not a CIDR (10.0.0.0/8, fd00::/8), an IP address, or host:port (127.0.0.1:3010, [::1]:3010, api.internal:443).`);
  }
}

/** Parses one variable's entries (already split on commas); throws on the first invalid one, naming `variable`. */
export function parseAllowList(entries: readonly string[], variable: string): AllowRule[] {
  return entries
    .map((e) => e.trim())
    .filter(Boolean)
    .map((e) => parseAllowEntry(e, variable));
}

function parseAllowEntry(text: string, variable: string): AllowRule {
  const invalid = () => new InvalidAllowEntryError(text, variable);
  if (text.includes('/')) {
    if (!ipaddr.isValidCIDR(text)) throw invalid();
    const [addr, bits] = ipaddr.parseCIDR(text);
    const unwrapped = unwrapCidr(addr, bits);
    return { kind: 'cidr', text, range: unwrapped, exact: unwrapped[1] === (unwrapped[0].kind() === 'ipv4' ? 32 : 128) };
  }
  const bare = parseAddress(text);
  if (bare) return { kind: 'cidr', text, range: [bare, bare.kind() === 'ipv4' ? 32 : 128], exact: true };
  const m = /^(?:\[([^\]]+)\]|([^:[\]]+)):(\d{1,5})$/.exec(text);
  const port = m ? Number(m[3]) : NaN;
  if (!m || port < 1 || port > 65535) throw invalid();
  const host = (m[1] ?? m[2]).toLowerCase();
  const address = parseAddress(host);
  if (m[1] !== undefined && !address) throw invalid();
  if (!address && !/^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*\.?$/.test(host)) throw invalid();
  return { kind: 'host-port', text, host: address ? address.toString() : host.replace(/\.$/, ''), address, port };
}

/** `::ffff:10.0.0.0/104` allows what `10.0.0.0/8` allows. */
function unwrapCidr(addr: ipaddr.IPv4 | ipaddr.IPv6, bits: number): [ipaddr.IPv4 | ipaddr.IPv6, number] {
  if (addr.kind() === 'ipv6' && (addr as ipaddr.IPv6).isIPv4MappedAddress() && bits >= 96) return [(addr as ipaddr.IPv6).toIPv4Address(), bits - 96];
  return [addr, bits];
}

/** Why a connection was refused: enough for a message that says what to change. */
export interface EgressRefusal {
  /** The host as the URL named it. */
  host: string;
  /** The address Weft would have connected to. */
  address: string;
  port: number;
  range: RefusedRange;
  /** The variable whose entry would allow it (the allow-list of the call's purpose). */
  allowVariable: string;
}

/**
 * The egress address policy: refused ranges minus the allow-list. Checked on the address
 * actually connected to (after DNS), so a name that resolves somewhere private is refused
 * however it is spelled.
 */
export class AddressPolicy {
  /** `allowVariable`: what a refusal tells the operator to add an entry to. */
  constructor(
    private readonly allow: readonly AllowRule[],
    readonly allowVariable: string,
  ) {}

  static fromEntries(entries: readonly string[], allowVariable: string): AddressPolicy {
    return new AddressPolicy(parseAllowList(entries, allowVariable), allowVariable);
  }

  /** Null when Weft may connect to `address`:`port` for a URL naming `host`; else why not. */
  check(target: { host: string; address: string; port: number }): EgressRefusal | null {
    const ip = parseAddress(target.address);
    const range = refusedRangeOf(target.address);
    if (!range) return null;
    if (ip && this.isAllowed(ip, normalizeHost(target.host), target.port, range.rule === 'metadata')) return null;
    return { host: target.host, address: ip ? ip.toString() : target.address, port: target.port, range, allowVariable: this.allowVariable };
  }

  /**
   * Whether an entry names exactly this host and port (`127.0.0.1:3010`, `api.internal:8080`):
   * the operator vouched for that one server, as opposed to a range or a bare address.
   */
  namesHostPort(host: string, port: number): boolean {
    const wanted = normalizeHost(host);
    return this.allow.some((rule) => rule.kind === 'host-port' && rule.port === port && rule.host === wanted);
  }

  private isAllowed(ip: ipaddr.IPv4 | ipaddr.IPv6, host: string, port: number, exactOnly: boolean): boolean {
    return this.allow.some((rule) => {
      if (rule.kind === 'cidr') {
        if (exactOnly && !rule.exact) return false;
        return rule.range[0].kind() === ip.kind() && ip.match(rule.range);
      }
      if (rule.port !== port) return false;
      if (rule.address) return rule.address.kind() === ip.kind() && rule.address.toString() === ip.toString();
      // A name the operator allowed on this port: whatever it resolves to is theirs to vouch for.
      return !exactOnly && rule.host === host;
    });
  }
}

function normalizeHost(host: string): string {
  const ip = parseAddress(host);
  return ip ? ip.toString() : host.toLowerCase().replace(/\.$/, '');
}
