import { AddressPolicy, InvalidAllowEntryError, refusedRangeOf } from '../../egress/address-policy';

describe('egress address policy', () => {
  const policy = new AddressPolicy([], 'WEFT_EGRESS_ALLOW_PROVIDERS');
  const check = (address: string, port = 443, host = address) => policy.check({ host, address, port });

  test.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['::1', 'loopback'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['64:ff9b::7f00:1', 'loopback'], // NAT64 form of 127.0.0.1
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['::ffff:10.0.0.1', 'private'],
    ['::ffff:192.168.0.10', 'private'],
    ['fc00::1', 'uniqueLocal'],
    ['fd12:3456::1', 'uniqueLocal'],
    ['169.254.1.1', 'linkLocal'],
    ['fe80::1', 'linkLocal'],
    ['fe80::1%eth0', 'linkLocal'],
    ['169.254.169.254', 'metadata'],
    ['::ffff:169.254.169.254', 'metadata'],
    ['fd00:ec2::254', 'metadata'],
    ['100.100.100.200', 'metadata'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['::', 'unspecified'],
    ['::ffff:0.0.0.0', 'unspecified'],
    ['255.255.255.255', 'broadcast'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['ff02::1', 'multicast'],
    ['::ffff:224.0.0.251', 'multicast'],
    ['100.64.0.1', 'carrierGradeNat'],
    ['240.0.0.1', 'reserved'],
    ['192.0.2.10', 'reserved'],
    ['2001:db8::1', 'reserved'],
  ])('%s is refused by the %s rule', (address, rule) => {
    const refusal = check(address);
    expect(refusal).not.toBeNull();
    expect(refusal!.range.rule).toBe(rule);
  });

  test.each(['93.184.215.14', '20.190.160.1', '140.82.112.6', '2606:4700::6810:84e5', '::ffff:140.82.112.6', '172.32.0.1', '100.128.0.1'])(
    '%s (public unicast) passes',
    (address) => {
      expect(check(address)).toBeNull();
      expect(refusedRangeOf(address)).toBeNull();
    },
  );

  test('host:port entries allow exactly that address and port', () => {
    const p = AddressPolicy.fromEntries(['127.0.0.1:3010', '[::1]:3011'], 'WEFT_EGRESS_ALLOW_PROVIDERS');
    expect(p.check({ host: '127.0.0.1', address: '127.0.0.1', port: 3010 })).toBeNull();
    expect(p.check({ host: 'localhost', address: '127.0.0.1', port: 3010 })).toBeNull();
    expect(p.check({ host: '::1', address: '::1', port: 3011 })).toBeNull();
    expect(p.check({ host: '127.0.0.1', address: '127.0.0.1', port: 3011 })?.range.rule).toBe('loopback');
    expect(p.check({ host: '127.0.0.2', address: '127.0.0.2', port: 3010 })?.range.rule).toBe('loopback');
    expect(p.check({ host: '::ffff:127.0.0.1', address: '::ffff:127.0.0.1', port: 3010 })).toBeNull(); // the same address
  });

  test('a named host:port entry allows that name on that port, whatever it resolves to', () => {
    const p = AddressPolicy.fromEntries(['hooks.internal:8443'], 'WEFT_EGRESS_ALLOW_PROVIDERS');
    expect(p.check({ host: 'hooks.internal', address: '10.0.0.7', port: 8443 })).toBeNull();
    expect(p.check({ host: 'HOOKS.internal.', address: '10.0.0.7', port: 8443 })).toBeNull();
    expect(p.check({ host: 'hooks.internal', address: '10.0.0.7', port: 443 })?.range.rule).toBe('private');
    expect(p.check({ host: 'other.internal', address: '10.0.0.7', port: 8443 })?.range.rule).toBe('private');
  });

  test('CIDR entries allow their range on any port, in both IPv4 and IPv4-mapped form', () => {
    const p = AddressPolicy.fromEntries(['10.0.0.0/8', 'fd00::/8', '192.168.1.5'], 'WEFT_EGRESS_ALLOW_PROVIDERS');
    expect(p.check({ host: '10.9.8.7', address: '10.9.8.7', port: 1 })).toBeNull();
    expect(p.check({ host: 'x', address: '::ffff:10.9.8.7', port: 80 })).toBeNull();
    expect(p.check({ host: 'x', address: 'fd12::1', port: 80 })).toBeNull();
    expect(p.check({ host: 'x', address: '192.168.1.5', port: 80 })).toBeNull();
    expect(p.check({ host: 'x', address: '192.168.1.6', port: 80 })?.range.rule).toBe('private');
    expect(p.check({ host: 'x', address: '172.16.0.1', port: 80 })?.range.rule).toBe('private');
    expect(p.check({ host: 'x', address: '127.0.0.1', port: 80 })?.range.rule).toBe('loopback');
  });

  test('a broad CIDR does not unlock a cloud metadata address; naming it exactly does', () => {
    const broad = AddressPolicy.fromEntries(['169.254.0.0/16', '0.0.0.0/0', 'fd00::/8'], 'WEFT_EGRESS_ALLOW_PROVIDERS');
    expect(broad.check({ host: 'x', address: '169.254.1.1', port: 80 })).toBeNull();
    expect(broad.check({ host: 'x', address: '169.254.169.254', port: 80 })?.range.rule).toBe('metadata');
    expect(broad.check({ host: 'x', address: 'fd00:ec2::254', port: 80 })?.range.rule).toBe('metadata');
    expect(AddressPolicy.fromEntries(['169.254.169.254'], 'WEFT_EGRESS_ALLOW_PROVIDERS').check({ host: 'x', address: '169.254.169.254', port: 80 })).toBeNull();
    expect(
      AddressPolicy.fromEntries(['169.254.169.254:80'], 'WEFT_EGRESS_ALLOW_PROVIDERS').check({ host: 'x', address: '169.254.169.254', port: 80 }),
    ).toBeNull();
  });

  test('namesHostPort: only a host:port entry names a server (what plain http with credentials needs), not a range or a bare address', () => {
    const p = AddressPolicy.fromEntries(['127.0.0.1:3010', 'api.internal:8080', '10.0.0.0/8', '192.168.1.5'], 'WEFT_EGRESS_ALLOW_PROVIDERS');
    expect(p.namesHostPort('127.0.0.1', 3010)).toBe(true);
    expect(p.namesHostPort('[::ffff:127.0.0.1]', 3010)).toBe(true);
    expect(p.namesHostPort('API.internal.', 8080)).toBe(true);
    expect(p.namesHostPort('127.0.0.1', 3011)).toBe(false);
    expect(p.namesHostPort('localhost', 3010)).toBe(false);
    expect(p.namesHostPort('10.1.2.3', 80)).toBe(false);
    expect(p.namesHostPort('192.168.1.5', 80)).toBe(false);
  });

  test('a refusal names the variable of the policy it came from', () => {
    const p = AddressPolicy.fromEntries([], 'WEFT_EGRESS_ALLOW_WEBHOOKS');
    expect(p.check({ host: 'x', address: '10.0.0.1', port: 80 })?.allowVariable).toBe('WEFT_EGRESS_ALLOW_WEBHOOKS');
  });

  test.each(['localhost', '127.0.0.1:0', '127.0.0.1:70000', '10.0.0.0/33', 'not a host:80', ':80', '[nothost]:80', 'http://127.0.0.1:80'])(
    '"%s" is not a valid allow entry',
    (entry) => {
      expect(() => AddressPolicy.fromEntries([entry], 'WEFT_EGRESS_ALLOW_PROVIDERS')).toThrow(InvalidAllowEntryError);
    },
  );
});
