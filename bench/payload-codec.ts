/**
 * What the Temporal payload encryption (auth/payload-codec.ts) costs per run: `npm run bench
 * -- codec`, or `npx tsx bench/payload-codec.ts` (it needs no servers). Takes every payload of
 * the committed replay histories of one Luma sync run (tests/replay/histories/sync-success.json,
 * 120 events in pages of 50) and one OneDrive action, and times encoding then decoding them all
 * (each payload is encoded once by its writer and decoded by its readers), many times over, as
 * CPU time of this process.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { PayloadEncryptionCodec } from '../auth/payload-codec';
import type { Figure } from './figure';

const HISTORIES = path.resolve(__dirname, '../tests/replay/histories');
const ROUNDS = 2_000;

/** Every payload of a history's events but the search attributes (Temporal indexes those; the codec never sees them). */
function payloadsOf(name: string): Payload[] {
  const history = historyFromJSON(JSON.parse(readFileSync(path.join(HISTORIES, `${name}.json`), 'utf8')));
  const found: Payload[] = [];
  const walk = (value: unknown, key: string): void => {
    if (!value || typeof value !== 'object' || key === 'searchAttributes') return;
    const v = value as Record<string, unknown>;
    if (v.metadata && typeof v.metadata === 'object' && 'data' in v) {
      found.push(v as Payload);
      return;
    }
    for (const [k, child] of Object.entries(v)) walk(child, k);
  };
  for (const event of history.events ?? []) walk(event, '');
  return found;
}

export async function payloadCodecFigures(): Promise<Figure[]> {
  const codec = new PayloadEncryptionCodec(randomBytes(32).toString('base64'));
  const figures: Figure[] = [];
  for (const [name, history] of [
    ['luma sync run', 'sync-success'],
    ['one-drive action run', 'action'],
  ] as const) {
    const payloads = payloadsOf(history);
    const bytes = payloads.reduce((n, p) => n + (p.data?.length ?? 0), 0);
    // Warm up (JIT, OpenSSL's cipher contexts), then measure.
    for (let i = 0; i < 100; i++) await codec.decode(await codec.encode(payloads));
    const start = process.cpuUsage();
    for (let i = 0; i < ROUNDS; i++) await codec.decode(await codec.encode(payloads));
    const used = process.cpuUsage(start);
    const perRunUs = (used.user + used.system) / ROUNDS;
    figures.push({
      figure: `payload codec: encode+decode of one ${name}`,
      cpuMicrosecondsPerRun: Number(perRunUs.toFixed(1)),
      payloads: payloads.length,
      payloadBytes: bytes,
      rounds: ROUNDS,
    });
  }
  // The largest input Weft writes: upload-file's 1 MiB file, base64 in its JSON.
  const upload = [defaultPayloadConverter.toPayload({ actionName: 'upload-file', input: { content: randomBytes(1024 * 1024).toString('base64') } })];
  const rounds = 50;
  const start = process.cpuUsage();
  for (let i = 0; i < rounds; i++) await codec.decode(await codec.encode(upload));
  const used = process.cpuUsage(start);
  figures.push({
    figure: 'payload codec: encode+decode of a 1 MiB upload-file input',
    cpuMicrosecondsPerRun: Math.round((used.user + used.system) / rounds),
    payloads: 1,
    payloadBytes: upload[0].data?.length ?? 0,
    rounds,
  });
  return figures;
}

if (require.main === module) {
  payloadCodecFigures().then(
    (figures) => figures.forEach((f) => console.log(JSON.stringify(f))),
    (err) => {
      console.error(err);
      process.exit(1);
    },
  );
}
