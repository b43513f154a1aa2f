import http from 'node:http';

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
  constructor(readonly request: RawRequest, readonly timeoutMs: number) {
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
    const r = http.request({ host: url.hostname, port: url.port, method: req.method, path: req.path, headers, agent: opts.agent ?? false, insecureHTTPParser: false });
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
