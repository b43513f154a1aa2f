import zlib from 'node:zlib';
import type { FuzzFixture } from './fixture';
import type { Prng } from './prng';
import { fillTemplate, type RouteSpec } from './routes';
import type { RawRequest } from './raw-request';

/**
 * Malformed requests, built from a route's near-valid request by one to three mutations of
 * its path, query, headers or body. Each mutation names its family, so the report can say
 * what kind of input met which answer.
 */
export interface Draft {
  route: RouteSpec;
  method: string;
  /** Path parameters, already encoded (or deliberately broken). */
  params: Record<string, string>;
  /** Replaces the filled template when set (unknown or mangled paths). */
  rawPath?: string;
  /** Query pairs, already encoded (or deliberately broken). */
  query: [string, string][];
  headers: Record<string, string | string[]>;
  body?: { kind: 'json'; value: unknown } | { kind: 'form'; pairs: [string, string][] } | { kind: 'raw'; bytes: string | Buffer };
  families: string[];
}

export interface FuzzRequest extends RawRequest {
  route: string;
  families: string[];
  readOnly: boolean;
}

/** encodeURIComponent that does not throw on lone surrogates (they go out as U+FFFD, as UTF-8 encoders send them). */
function enc(value: string): string {
  let out = '';
  for (const byte of Buffer.from(value, 'utf8')) {
    const c = String.fromCharCode(byte);
    out += /[A-Za-z0-9\-_.!~*'()]/.test(c) ? c : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

function baseDraft(route: RouteSpec, f: FuzzFixture, n: number): Draft {
  const params = Object.fromEntries(
    Object.entries(route.params?.(f) ?? {}).map(([k, v]) => [k, route.template.includes(`*${k}`) ? v.split('/').map(enc).join('/') : enc(v)]),
  );
  const query = Object.entries(route.query?.(f) ?? {}).map(([k, v]) => [enc(k), enc(v)] as [string, string]);
  const headers: Record<string, string | string[]> = { ...route.headers?.(f) };
  if (route.auth === 'secret-key') headers.authorization = `Bearer ${f.stack.keys.dev}`;
  let body: Draft['body'];
  if (route.body === 'json') {
    headers['content-type'] = 'application/json';
    body = { kind: 'json', value: route.json?.(f, n) ?? {} };
  } else if (route.body === 'form') {
    headers['content-type'] = 'application/x-www-form-urlencoded';
    body = { kind: 'form', pairs: Object.entries(route.form?.(f) ?? {}) };
  }
  return { route, method: route.method, params, query, headers, body, families: [] };
}

function serialize(d: Draft): FuzzRequest {
  const path = d.rawPath ?? fillTemplate(d.route.template, d.params);
  const qs = d.query.map(([k, v]) => (v === '\u0000none' ? k : `${k}=${v}`)).join('&');
  let body: string | Buffer | undefined;
  if (d.body?.kind === 'json') body = jsonOrDeepText(d.body.value);
  else if (d.body?.kind === 'form') body = d.body.pairs.map(([k, v]) => `${enc(k)}=${enc(v)}`).join('&');
  else if (d.body?.kind === 'raw') body = d.body.bytes;
  return {
    method: d.method,
    path: qs ? `${path}?${qs}` : path,
    headers: d.headers,
    body,
    route: d.route.name,
    families: d.families,
    readOnly: d.route.readOnly,
  };
}

type Mutation = (d: Draft, r: Prng, f: FuzzFixture) => void;

/** JSON text of a value; one nested past what JSON.stringify can walk becomes deep JSON text of the same kind. */
function jsonOrDeepText(value: unknown): string {
  try {
    return JSON.stringify(value) ?? '';
  } catch {
    return `${'{"a":'.repeat(50_000)}1${'}'.repeat(50_000)}`;
  }
}

// ---------------------------------------------------------------------------- values

const BAD_ESCAPES = ['%zz', '%', '%%', '%E0%A4%A', '%C0%AF', '%FF%FE', '%u0041', '%2', 'a%'];
const ODD_SEGMENTS = [
  '%2F',
  '..',
  '%2e%2e',
  '%00',
  '.',
  '$where',
  'a.b',
  '__proto__',
  'constructor',
  '%F0%9F%92%A9',
  '%EF%BF%BF',
  '%20',
  '+',
  '~',
  ';x=1',
  'a%2Fb',
  '',
];

function oddString(r: Prng): string {
  return r.pick([
    '',
    ' ',
    '\u0000',
    'a\u0000b',
    '\ud800',
    '\udfff\ud800',
    '💩'.repeat(r.between(1, 50)),
    'x'.repeat(r.pick([256, 1_000, 5_000, 70_000])),
    '$ne',
    '{"$gt":""}',
    '../../etc/passwd',
    '<script>alert(1)</script>',
    "'; DROP TABLE x; --",
    '\r\nx-injected: 1',
    '%zz',
    'null',
    '0',
    '-1',
    '1e400',
    'NaN',
    'true',
    '\u202e',
    'Ā',
  ]);
}

function oddValue(r: Prng): unknown {
  const depth = r.pick([3, 40, 200, 2_000]);
  return r.pick<() => unknown>([
    () => null,
    () => true,
    () => 0,
    () => -1,
    () => 1.5,
    () => 2 ** 64,
    () => -0,
    () => oddString(r),
    () => [],
    () => [[1], [2]],
    () => ({}),
    () => ({ $set: { a: 1 } }),
    () => ({ 'a.b': 1 }),
    () => ({ '': 1 }),
    () => ({ 'k\u0000': 1 }),
    () => ({ __proto__: { polluted: true } }),
    () => JSON.parse('{"__proto__":{"polluted":true}}'),
    () => ({ constructor: { prototype: { polluted: true } } }),
    () => nest(depth, r.chance(0.5)),
    () => Array.from({ length: r.pick([100, 5_000]) }, (_, i) => i),
    () => Object.fromEntries(Array.from({ length: r.pick([100, 2_000]) }, (_, i) => [`k${i}`, i])),
  ])();
}

function nest(depth: number, arrays: boolean): unknown {
  let v: unknown = 1;
  for (let i = 0; i < depth; i++) v = arrays ? [v] : { a: v };
  return v;
}

// ---------------------------------------------------------------------------- mutations

const pathMutations: Mutation[] = [
  (d, r) => {
    const names = Object.keys(d.params);
    if (!names.length) return void (d.rawPath = `${fillTemplate(d.route.template, d.params)}/${r.pick(BAD_ESCAPES)}`);
    d.params[r.pick(names)] = r.pick([r.pick(BAD_ESCAPES), `luma${r.pick(BAD_ESCAPES)}`, `${r.pick(BAD_ESCAPES)}${r.pick(BAD_ESCAPES)}`]);
  },
  (d, r) => {
    const names = Object.keys(d.params);
    if (names.length) d.params[r.pick(names)] = r.pick(ODD_SEGMENTS);
    else d.rawPath = `${fillTemplate(d.route.template, d.params)}/${r.pick(ODD_SEGMENTS)}`;
  },
  (d, r) => {
    const names = Object.keys(d.params);
    if (names.length) d.params[r.pick(names)] = r.pick(['x'.repeat(r.pick([300, 2_000, 8_000])), enc(oddString(r))]);
  },
  (d, r) => {
    const path = fillTemplate(d.route.template, d.params);
    d.rawPath = r.pick([
      `/${path}`,
      `${path}/`,
      `${path}//`,
      path.toUpperCase(),
      `${path}/../${path}`,
      `${path}/fz-extra`,
      `${path}.json`,
      `${path}%2F`,
      `${path};jsessionid=1`,
      `/./${path.slice(1)}`,
    ]);
  },
  (d, r) => {
    // Bytes Node's client would not send: a raw socket carries them.
    const path = fillTemplate(d.route.template, d.params);
    d.rawPath = r.pick([`${path} x`, `${path}\u0001`, `${path}é`, `${path}\t`, `${path}#frag`]);
  },
];

const queryMutations: Mutation[] = [
  (d, r) => {
    const [k, v] = d.query.length ? r.pick(d.query) : ['q', 'x'];
    d.query.push([k, v], [k, r.pick(['a', v, ''])]);
  },
  (d, r) => {
    const [k] = d.query.length ? r.pick(d.query) : ['q'];
    const form = r.pick([`${k}[]`, `${k}[0]`, `${k}[a]`, `${k}[$ne]`, `${k}[a][b][c]`, `${k}${'[a]'.repeat(30)}`, `${k}[__proto__]`]);
    d.query = d.query.filter(([q]) => q !== k);
    d.query.push([enc(form).replace(/%5B/g, '[').replace(/%5D/g, ']'), r.pick(['1', 'x', ''])]);
  },
  (d, r) => {
    const [k] = d.query.length ? r.pick(d.query) : ['q'];
    d.query = d.query.filter(([q]) => q !== k);
    d.query.push([k, r.pick(['x'.repeat(r.pick([1_000, 8_000, 20_000])), enc(oddString(r)), r.pick(BAD_ESCAPES), '', '\u0000none'])]);
  },
  (d, r) => {
    d.query.push(...Array.from({ length: r.pick([50, 1_001, 3_000]) }, (_, i) => [`p${i}`, '1'] as [string, string]));
  },
  (d, r) => {
    d.query.push(
      r.pick([
        ['__proto__[polluted]', '1'],
        ['constructor[prototype][polluted]', '1'],
        ['%zz', '1'],
        ['', 'x'],
        ['&&&', ''],
        ['a=b=c', 'd'],
        ['limit', '-1'],
        ['limit', '1e400'],
        ['limit', 'NaN'],
        ['page', '99999999999999999999'],
        ['cursor', 'not-a-cursor'],
        ['modified_after', 'yesterday'],
        ['filter', 'added,updated,deleted'],
        ['ids[]', 'x'],
      ] as [string, string][]),
    );
  },
  (d) => {
    d.query = [];
  },
];

const CONTENT_TYPES = [
  'text/plain',
  'text/plain; charset=utf-8',
  'application/json; charset=latin1',
  'application/json; charset=utf-16',
  'application/json; charset=utf-32',
  'application/json; charset=koi8-r',
  'application/json; charset=x-unknown',
  'application/json; charset',
  'application/json;;',
  'application/json, text/plain',
  'APPLICATION/JSON',
  'application/vnd.api+json',
  'application/x-www-form-urlencoded',
  'application/x-www-form-urlencoded; charset=iso-8859-1',
  'multipart/form-data; boundary=fz',
  'application/xml',
  'json',
  '*/*',
  '',
];

const headerMutations: Mutation[] = [
  (d, r) => {
    const type = r.pick(CONTENT_TYPES);
    if (type === '') delete d.headers['content-type'];
    else d.headers['content-type'] = type;
    if (!d.body) d.body = { kind: 'raw', bytes: r.pick(['{}', 'a=b', '<x/>', 'plain']) };
  },
  (d, r) => {
    const encoding = r.pick(['gzip', 'deflate', 'br', 'identity', 'x-unknown', 'compress', 'gzip, gzip', 'GZIP', 'zstd', '']);
    d.headers['content-encoding'] = encoding;
    if (!d.body) d.body = { kind: 'raw', bytes: '{}' };
  },
  (d, r) => {
    // A body that really is compressed, sometimes under the wrong name.
    const text = d.body?.kind === 'json' ? JSON.stringify(d.body.value) : d.body?.kind === 'raw' ? String(d.body.bytes) : '{}';
    const [name, bytes] = r.pick([
      ['gzip', zlib.gzipSync(text)],
      ['deflate', zlib.deflateSync(text)],
      ['br', zlib.brotliCompressSync(text)],
      ['gzip', zlib.deflateSync(text)],
      ['br', zlib.gzipSync(text)],
      ['gzip', zlib.gzipSync(text).subarray(0, 12)],
      ['gzip', bomb()],
    ] as [string, Buffer][]);
    d.headers['content-encoding'] = name;
    d.headers['content-type'] ??= 'application/json';
    d.body = { kind: 'raw', bytes };
  },
  (d, r, f) => {
    const choice = r.pick([
      null,
      'Bearer',
      'Bearer ',
      'bearer ' + f.stack.keys.dev,
      'Basic ' + Buffer.from(`${f.stack.keys.dev}:`).toString('base64'),
      'Bearer weft_sk_dev_wrong',
      `Bearer ${f.stack.keys.prod}`,
      `Bearer ${f.stack.keys.dev}x`,
      `Bearer ${f.stack.keys.dev} ${f.stack.keys.dev}`,
      `Bearer ${'x'.repeat(8_000)}`,
      `Bearer ${f.sessionToken}`,
      'Bearer \u0000',
      'Bearer é',
    ]);
    if (choice === null) delete d.headers.authorization;
    else d.headers.authorization = choice;
  },
  (d, r) => {
    const name = r.pick(['connection-id', 'provider-config-key', 'x-async', 'x-max-retries']);
    d.headers[name] = r.pick<string | string[]>([
      '',
      ' ',
      'fz-missing',
      ['a', 'b'],
      '$ne',
      'x'.repeat(4_000),
      '-1',
      '999',
      'maybe',
      'true',
      'a\u0001b',
      'é',
      '../luma',
    ]);
  },
  (d, r) => {
    d.headers[
      r.pick(['accept', 'accept-charset', 'accept-encoding', 'origin', 'cookie', 'x-forwarded-host', 'x-forwarded-proto', 'host', 'range', 'if-none-match'])
    ] = r.pick([
      'text/html',
      '*/*;q=0',
      'x'.repeat(2_000),
      'bytes=0-0,1-1,2-2',
      'evil.example',
      'weft_oauth_binding=x; a=b',
      'gzip;q=1.0, identity; q=0',
      '\u0001',
    ]);
  },
  (d, r) => {
    for (let i = 0; i < r.pick([50, 200]); i++) d.headers[`x-fz-${i}`] = 'v';
  },
];

const stallMutations: Mutation[] = [
  (d, r) => {
    // Announces more than it sends: the server's request timeout must end it (408).
    if (!d.body) d.body = { kind: 'raw', bytes: '{' };
    d.headers['content-length'] = String(r.pick([10_000, 1_000_000]));
  },
];

/** 3 MB of spaces, gzip-compressed to a few KB: decompressed past the 2 MB limit. */
let gzipBomb: Buffer | undefined;
const bomb = () => (gzipBomb ??= zlib.gzipSync(Buffer.alloc(3 * 1024 * 1024, 32)));

function bodyText(d: Draft): string {
  if (d.body?.kind === 'json') return jsonOrDeepText(d.body.value);
  if (d.body?.kind === 'raw') return String(d.body.bytes);
  return '{}';
}

const bodySyntaxMutations: Mutation[] = [
  (d, r) => {
    const text = bodyText(d);
    d.body = {
      kind: 'raw',
      bytes: r.pick([
        text.slice(0, Math.max(1, r.int(text.length))),
        `${text},`,
        text.replace(/"/g, "'"),
        `\ufeff${text}`,
        `${text}${text}`,
        '{"a":NaN}',
        '{"a":1e400}',
        '{"a":-}',
        '{"a":"\\ud800"}',
        '{"a":"\\u0000"}',
        '{"a" 1}',
        '{,}',
        '',
        ' ',
        '\u0000',
        'null',
        'true',
        '123',
        '"string"',
        '[]',
        '[1,2,3]',
        '{"__proto__":{"polluted":true}}',
        '{"constructor":{"prototype":{"polluted":true}}}',
        '{"a":1,"a":2}',
      ]),
    };
    if (!d.headers['content-type']) d.headers['content-type'] = 'application/json';
  },
  (d, r) => {
    const depth = r.pick([1_000, 20_000, 100_000]);
    const open = r.pick(['[', '{"a":']);
    const close = open === '[' ? ']' : '}';
    d.body = { kind: 'raw', bytes: `${open.repeat(depth)}1${close.repeat(depth)}` };
    d.headers['content-type'] = 'application/json';
  },
  (d, r) => {
    // Around the 2 MB limit (after decompression).
    const size = r.pick([1_900_000, 2_200_000]);
    d.body = { kind: 'raw', bytes: JSON.stringify({ blob: 'x'.repeat(size) }) };
    d.headers['content-type'] = 'application/json';
  },
];

/** Paths to every value of a JSON value (objects and arrays), up to a depth. */
function valuePaths(v: unknown, prefix: (string | number)[] = [], out: (string | number)[][] = [], depth = 0): (string | number)[][] {
  if (depth > 6 || v === null || typeof v !== 'object') return out;
  for (const [k, child] of Object.entries(v)) {
    const p = [...prefix, Array.isArray(v) ? Number(k) : k];
    out.push(p);
    valuePaths(child, p, out, depth + 1);
  }
  return out;
}

function setAt(root: unknown, path: (string | number)[], value: unknown): void {
  let at = root as Record<string | number, unknown>;
  for (const key of path.slice(0, -1)) at = at[key] as Record<string | number, unknown>;
  at[path[path.length - 1]] = value;
}

function deleteAt(root: unknown, path: (string | number)[]): void {
  let at = root as Record<string | number, unknown>;
  for (const key of path.slice(0, -1)) at = at[key] as Record<string | number, unknown>;
  delete at[path[path.length - 1]];
}

/** A copy to mutate; null when the value nests too deeply to copy (an earlier mutation made it so). */
function cloneOrNull(value: unknown): unknown {
  try {
    return structuredClone(value);
  } catch {
    return null;
  }
}

const bodyShapeMutations: Mutation[] = [
  (d, r) => {
    if (d.body?.kind !== 'json') return void (d.body = { kind: 'json', value: { [oddString(r)]: oddValue(r) } });
    const value = cloneOrNull(d.body.value);
    const paths = valuePaths(value);
    if (!paths.length || value === null || typeof value !== 'object') return void (d.body = { kind: 'json', value: oddValue(r) });
    setAt(value, r.pick(paths), oddValue(r));
    d.body = { kind: 'json', value };
  },
  (d, r) => {
    if (d.body?.kind !== 'json' || d.body.value === null || typeof d.body.value !== 'object') return;
    const value = cloneOrNull(d.body.value);
    if (value === null) return;
    const paths = valuePaths(value);
    if (paths.length) deleteAt(value, r.pick(paths));
    d.body = { kind: 'json', value };
  },
  (d, r) => {
    if (d.body?.kind !== 'json' || d.body.value === null || typeof d.body.value !== 'object') return;
    const value = cloneOrNull(d.body.value) as Record<string, unknown> | null;
    if (value === null) return;
    const objects = [[] as (string | number)[], ...valuePaths(value)].filter((p) => {
      let at: unknown = value;
      for (const k of p) at = (at as Record<string | number, unknown>)[k];
      return at !== null && typeof at === 'object' && !Array.isArray(at);
    });
    if (!objects.length) return;
    const target = r.pick(objects);
    let at: unknown = value;
    for (const k of target) at = (at as Record<string | number, unknown>)[k];
    (at as Record<string, unknown>)[r.pick(['$set', '$where', 'a.b', '', 'k\u0000', '__proto__', 'constructor', 'prototype', 'unexpected', 'x'.repeat(300)])] =
      oddValue(r);
    d.body = { kind: 'json', value };
  },
  (d, r) => {
    d.body = { kind: 'json', value: oddValue(r) };
    d.headers['content-type'] ??= 'application/json';
  },
];

const formMutations: Mutation[] = [
  (d, r) => {
    const pairs: [string, string][] = d.body?.kind === 'form' ? [...d.body.pairs] : [];
    const pick = r.int(6);
    if (pick === 0) pairs.push(...Array.from({ length: r.pick([1_001, 2_000]) }, (_, i) => [`f${i}`, '1'] as [string, string]));
    if (pick === 1) pairs.push(['connect_session_token', 'second'], ['connect_session_token', 'third']);
    if (pick === 2) pairs.push(['connect_session_token[a]', '1'], ['apiKey[]', 'x']);
    if (pick === 3) pairs.push(['apiKey', oddString(r)]);
    if (pick === 4) pairs.push(['pad', 'x'.repeat(20_000)]);
    if (pick === 5) {
      d.body = { kind: 'raw', bytes: r.pick(['a=%zz', '%zz=1', '&&&', '=', 'a=b&=c', 'apiKey=%00', 'apiKey=%C0%AF']) };
      d.headers['content-type'] = 'application/x-www-form-urlencoded';
      return;
    }
    d.body = { kind: 'form', pairs };
    d.headers['content-type'] = 'application/x-www-form-urlencoded';
  },
];

const methodMutations: Mutation[] = [
  (d, r) => {
    // Never DELETE: on a route that names a seeded resource it would be a valid request that
    // removes what the rest of the run needs (the DELETE routes are fuzzed on their own).
    d.method = r.pick(['GET', 'POST', 'PUT', 'PATCH', 'OPTIONS', 'HEAD', 'FZ']);
  },
];

const FAMILIES: { name: string; weight: number; bodyOnly?: boolean; mutations: Mutation[] }[] = [
  { name: 'path', weight: 3, mutations: pathMutations },
  { name: 'query', weight: 3, mutations: queryMutations },
  { name: 'headers', weight: 4, mutations: headerMutations },
  { name: 'body-syntax', weight: 2, mutations: bodySyntaxMutations },
  { name: 'body-shape', weight: 4, bodyOnly: true, mutations: bodyShapeMutations },
  { name: 'form', weight: 1, mutations: formMutations },
  { name: 'method', weight: 1, mutations: methodMutations },
  // Rare: each one holds a connection until the server's request timeout.
  { name: 'stall', weight: 0.1, mutations: stallMutations },
];

/** One malformed request for `route`: its near-valid request with one to three mutations. */
export function malformedRequest(route: RouteSpec, f: FuzzFixture, r: Prng, n: number): FuzzRequest {
  const d = baseDraft(route, f, n);
  const count = r.pick([1, 1, 2, 3]);
  const families = FAMILIES.filter((fam) => (!fam.bodyOnly || route.body === 'json') && (fam.name !== 'form' || route.body === 'form' || r.chance(0.2)));
  const total = families.reduce((s, fam) => s + fam.weight, 0);
  for (let i = 0; i < count; i++) {
    let x = r.next() * total;
    const fam = families.find((candidate) => (x -= candidate.weight) < 0) ?? families[0];
    const mutation = r.int(fam.mutations.length);
    fam.mutations[mutation](d, r, f);
    d.families.push(`${fam.name}#${mutation}`);
  }
  return serialize(d);
}
