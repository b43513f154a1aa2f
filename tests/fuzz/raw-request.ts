import http from 'node:http';
import net from 'node:net';

/**
 * One HTTP exchange with full control over what goes on the wire: the path is sent as
 * given (no normalisation, no re-encoding), any header and any body bytes. `fetch` would
 * refuse or rewrite much of what the bad-input tests and the fuzz need to send.
 */
export interface RawRequest {
  method: string;
  path: string;
  headers?: Record<string, string | string[]>;
  body?: string | Buffer;
}

export interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  /** The JSON body, or undefined when the body is not JSON. */
  json: any;
  ms: number;
}

export class RequestTimeout extends Error {
  constructor(
    readonly request: RawRequest,
    readonly timeoutMs: number,
  ) {
    super(`${request.method} ${request.path.slice(0, 200)} got no complete answer within ${timeoutMs} ms`);
  }
}

export function rawRequest(baseUrl: string, req: RawRequest, opts: { timeoutMs?: number; agent?: http.Agent } = {}): Promise<RawResponse> {
  const url = new URL(baseUrl);
  const timeoutMs = opts.timeoutMs ?? 10_000;
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const headers: http.OutgoingHttpHeaders = { ...req.headers };
    if (req.body !== undefined && headers['content-length'] === undefined && headers['transfer-encoding'] === undefined) {
      headers['content-length'] = Buffer.byteLength(req.body);
    }
    let r: http.ClientRequest;
    try {
      r = http.request({ host: url.hostname, port: url.port, method: req.method, path: req.path, headers, agent: opts.agent ?? false });
    } catch {
      // Node's client refuses to send what it considers invalid (a control character in a
      // header or the path): write those bytes on a plain socket instead.
      rawSocketRequest(url, req, headers, timeoutMs, started).then(resolve, reject);
      return;
    }
    const timer = setTimeout(() => {
      r.destroy();
      reject(new RequestTimeout(req, timeoutMs));
    }, timeoutMs);
    r.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        clearTimeout(timer);
        const text = Buffer.concat(chunks).toString('utf8');
        let json: unknown;
        try {
          json = JSON.parse(text);
        } catch {
          json = undefined;
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json, ms: performance.now() - started });
      });
      res.on('error', (err) => {
        clearTimeout(timer);
        reject(err);
      });
    });
    r.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    r.end(req.body);
  });
}

/** Writes the request as raw HTTP/1.1 bytes and reads the answer until the server closes. */
function rawSocketRequest(url: URL, req: RawRequest, headers: http.OutgoingHttpHeaders, timeoutMs: number, started: number): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const lines = [`${req.method} ${req.path} HTTP/1.1`, `Host: ${url.host}`, 'Connection: close'];
    for (const [name, value] of Object.entries(headers)) {
      for (const v of ([] as unknown[]).concat(value)) lines.push(`${name}: ${String(v)}`);
    }
    const socket = net.connect(Number(url.port), url.hostname);
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new RequestTimeout(req, timeoutMs));
    }, timeoutMs);
    socket.on('connect', () => {
      socket.write(Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1'));
      if (req.body !== undefined) socket.write(req.body);
    });
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(timer);
      const raw = Buffer.concat(chunks);
      const split = raw.indexOf('\r\n\r\n');
      const head = raw
        .subarray(0, split < 0 ? raw.length : split)
        .toString('latin1')
        .split('\r\n');
      const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(head[0] ?? '')?.[1] ?? 0);
      if (!status) return reject(new Error(`no HTTP answer to ${req.method} ${req.path.slice(0, 100)} (connection closed)`));
      const resHeaders: http.IncomingHttpHeaders = {};
      for (const line of head.slice(1)) {
        const i = line.indexOf(':');
        if (i > 0) resHeaders[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
      }
      let body: Buffer = split < 0 ? Buffer.alloc(0) : raw.subarray(split + 4);
      if (/chunked/i.test(String(resHeaders['transfer-encoding'] ?? ''))) body = dechunk(body);
      const text = body.toString('utf8');
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch {
        json = undefined;
      }
      resolve({ status, headers: resHeaders, text, json, ms: performance.now() - started });
    });
  });
}

function dechunk(body: Buffer): Buffer {
  const out: Buffer[] = [];
  let at = 0;
  for (;;) {
    const eol = body.indexOf('\r\n', at);
    if (eol < 0) break;
    const size = parseInt(body.subarray(at, eol).toString('latin1'), 16);
    if (!size) break;
    out.push(body.subarray(eol + 2, eol + 2 + size));
    at = eol + 2 + size + 2;
  }
  return Buffer.concat(out);
}
