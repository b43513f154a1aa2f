import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { crc32, deflateSync } from 'node:zlib';

type Rgb = [number, number, number];

/** A real PNG of one colour (8-bit RGB), which browsers decode: what a logo server of the tests sends. */
export function solidPng(width: number, height: number, rgb: Rgb): Buffer {
  return drawnPng(width, height, () => rgb);
}

/** A real PNG (8-bit RGB) whose every pixel `paint` colours. */
export function drawnPng(width: number, height: number, paint: (x: number, y: number) => Rgb): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(data.length);
    const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(body));
    return Buffer.concat([len, body, crc]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 2; // RGB
  const raw = Buffer.concat(
    Array.from({ length: height }, (_, y) => Buffer.concat([Buffer.from([0]), Buffer.alloc(width * 3).map((_, i) => paint(Math.floor(i / 3), y)[i % 3])])),
  );
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(raw)),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

export interface ImageServer {
  url: string;
  /** Requests received, by path. */
  hits: string[];
  close(): Promise<void>;
}

/** A server of test files on 127.0.0.1: path → status, type and body (a function to vary them). */
export async function startImageServer(
  files: Record<string, { status?: number; type?: string; body?: Buffer | string; headers?: Record<string, string> }>,
): Promise<ImageServer> {
  const hits: string[] = [];
  const server = http.createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    hits.push(path);
    const file = files[path];
    if (!file) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
      return;
    }
    res.writeHead(file.status ?? 200, { ...(file.type ? { 'content-type': file.type } : {}), ...file.headers });
    res.end(file.body ?? '');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    hits,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
