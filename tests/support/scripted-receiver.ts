import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { coreWebhookDelivery } from '../../app/webhook-delivery';
import type { OutboxDeps } from '../../webhooks/outbox';
import type { WeftStack } from './weft-stack';

/** One POST as the app's endpoint saw it, with what it answered. */
export interface ReceivedRequest {
  at: number;
  path: string;
  headers: IncomingHttpHeaders;
  /** The body as sent: what a signature is verified over. */
  raw: string;
  body: any;
  status: number;
}

export interface ScriptedReceiver {
  url: string;
  received: ReceivedRequest[];
  /** The next request matching `match` (each call one request) is answered `status`; others get the default. */
  answerNext(match: (r: Omit<ReceivedRequest, 'status'>) => boolean, status: number): void;
  /** Forgets the answers of answerNext that no request took. */
  clearAnswers(): void;
  /** The status answered when no answerNext applies (200 unless changed). */
  setDefaultStatus(status: number): void;
  /** What to answer with (the body), given the request; empty when unset. */
  setAnswerBody(answer: ((r: Omit<ReceivedRequest, 'status'>) => string) | null): void;
  /** The first request matching `pred`, waiting for it up to `timeoutMs`. */
  waitFor(pred: (r: ReceivedRequest) => boolean, timeoutMs?: number): Promise<ReceivedRequest>;
  /** The requests carrying this `webhook-id`, in arrival order. */
  withId(id: string): ReceivedRequest[];
  close(): Promise<void>;
}

/** An app's webhook endpoint on 127.0.0.1 that answers as told (statuses, bodies) and keeps what each request got, for the delivery tests. */
export async function startScriptedReceiver(): Promise<ScriptedReceiver> {
  const received: ReceivedRequest[] = [];
  const answers: Array<{ match: (r: Omit<ReceivedRequest, 'status'>) => boolean; status: number }> = [];
  let defaultStatus = 200;
  let answerBody: ((r: Omit<ReceivedRequest, 'status'>) => string) | null = null;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const request = { at: Date.now(), path: req.url ?? '', headers: req.headers, raw, body: JSON.parse(raw) };
      const answer = answers.findIndex((a) => a.match(request));
      const status = answer === -1 ? defaultStatus : answers.splice(answer, 1)[0].status;
      received.push({ ...request, status });
      res.writeHead(status, { 'content-type': 'application/json' }).end(answerBody ? answerBody(request) : '');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received,
    answerNext: (match, status) => void answers.push({ match, status }),
    clearAnswers: () => void answers.splice(0),
    setDefaultStatus: (status) => (defaultStatus = status),
    setAnswerBody: (answer) => (answerBody = answer),
    async waitFor(pred, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const hit = received.find(pred);
        if (hit) return hit;
        if (Date.now() > deadline) throw new Error(`no matching webhook within ${timeoutMs} ms (got ${received.map((r) => r.raw).join(' | ')})`);
        await new Promise((r) => setTimeout(r, 25));
      }
    },
    withId: (id) => received.filter((r) => r.headers['webhook-id'] === id),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** The three Standard Webhooks headers of a request, as a verifying library takes them. */
export function signatureHeaders(r: Pick<ReceivedRequest, 'headers'>): Record<string, string> {
  return {
    'webhook-id': String(r.headers['webhook-id']),
    'webhook-timestamp': String(r.headers['webhook-timestamp']),
    'webhook-signature': String(r.headers['webhook-signature']),
  };
}

/** Whether the `standardwebhooks` library, holding `secret`, accepts the request. */
export function verifies(secret: string, r: Pick<ReceivedRequest, 'headers' | 'raw'>): boolean {
  try {
    new Webhook(secret).verify(r.raw, signatureHeaders(r));
    return true;
  } catch {
    return false;
  }
}

/** What queueWebhook needs, from the stack's core: events go to their webhookDelivery workflows on the stack's queue. */
export function stackOutboxDeps(stack: WeftStack): OutboxDeps {
  const { core } = stack;
  return { stores: core.stores, cipher: core.cipher, logger: core.logger, egress: stack.egress.webhooks, startDelivery: coreWebhookDelivery(core) };
}
