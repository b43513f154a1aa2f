/**
 * Outbound webhook deliveries of a simulated provider: what the real service does when it
 * POSTs an event to a subscriber's URL. Deliveries go out in the background with plain
 * `fetch` (the provider is a third party, not Weft), one at a time per lane (GitHub sends a
 * repository's events in order; a lane is whatever the simulator orders by), lanes in
 * parallel. Each attempt is recorded: answered (with the receiver's status) or an error
 * (network failure, timeout). Nothing is retried on its own; `redeliver` sends a delivery
 * again with the same id, headers and body, as GitHub's "Redeliver" button does.
 */

/** One attempt of one delivery, as the simulator's delivery log shows it. */
export interface WebhookDeliveryRecord {
  /** The delivery's id (GitHub: `X-GitHub-Delivery`); a redelivery repeats it. */
  id: string;
  /** The event (GitHub: `X-GitHub-Event`; Graph: `change` / `lifecycle`; Luma: the event type). */
  event: string;
  /** The event's action or sub-type, when it has one (GitHub `action`, Graph `lifecycleEvent`). */
  action: string | null;
  url: string;
  /** 1 for the first attempt, 2 and on for redeliveries. */
  attempt: number;
  redelivery: boolean;
  /** `pending` until the receiver answers (`answered`, any status) or the request fails (`error`). */
  status: 'pending' | 'answered' | 'error';
  /** The receiver's HTTP status, when it answered. */
  statusCode: number | null;
  /** Answered with a 2xx. */
  ok: boolean;
  /** Why the attempt failed: a network error, a timeout, or `HTTP <status>` for a non-2xx answer. */
  error: string | null;
  /** Simulator clock (epoch ms) when the attempt was queued. */
  queuedAt: number;
  /** Exactly what was sent. */
  headers: Record<string, string>;
  body: string;
  /** The receiver's answer body (first 2 KB), when it answered. */
  responseBody: string | null;
}

export interface OutboundDelivery {
  id: string;
  /** Deliveries of one lane go out one after another, in the order queued. */
  lane: string;
  url: string;
  event: string;
  action: string | null;
  headers: Record<string, string>;
  body: string;
}

export interface PostResult {
  statusCode: number | null;
  error: string | null;
  responseBody: string | null;
  contentType: string | null;
}

const RESPONSE_BODY_MAX = 2048;

/**
 * POSTs once, waiting at most `timeoutMs` for the answer and its body. Never throws: a
 * failure is `statusCode: null` with the error's message.
 */
export async function postOnce(url: string, headers: Record<string, string>, body: string, timeoutMs: number, abort?: AbortSignal): Promise<PostResult> {
  const signal = abort ? AbortSignal.any([abort, AbortSignal.timeout(timeoutMs)]) : AbortSignal.timeout(timeoutMs);
  try {
    const res = await fetch(url, { method: 'POST', headers, body, redirect: 'manual', signal });
    const text = await res.text();
    return {
      statusCode: res.status,
      error: res.status >= 200 && res.status < 300 ? null : `HTTP ${res.status}`,
      responseBody: text.slice(0, RESPONSE_BODY_MAX),
      contentType: res.headers.get('content-type'),
    };
  } catch (err) {
    const e = err as Error & { cause?: { code?: string; message?: string } };
    const why =
      e.name === 'TimeoutError' ? `timed out after ${timeoutMs} ms` : e.name === 'AbortError' ? 'aborted' : (e.cause?.code ?? e.cause?.message ?? e.message);
    return { statusCode: null, error: why, responseBody: null, contentType: null };
  }
}

export class WebhookSender {
  private readonly log: WebhookDeliveryRecord[] = [];
  private readonly sent = new Map<string, OutboundDelivery>();
  private readonly lanes = new Map<string, Promise<void>>();
  private readonly inFlight = new Set<Promise<void>>();
  private abort = new AbortController();

  constructor(
    private readonly opts: {
      /** How long the provider waits for the receiver's answer (GitHub: 10 s). */
      timeoutMs: number;
      clock: () => number;
    },
  ) {}

  /** Queues a first attempt; returns at once. */
  enqueue(d: OutboundDelivery): void {
    this.sent.set(d.id, d);
    this.schedule(d, false);
  }

  /** Sends a delivery again: same id, headers and body, recorded as the next attempt. */
  redeliver(id: string): void {
    const d = this.sent.get(id);
    if (!d) throw new Error(`redeliver: no delivery ${id}`);
    this.schedule(d, true);
  }

  /** Every attempt so far, oldest first (copies). */
  records(): WebhookDeliveryRecord[] {
    return this.log.map((r) => ({ ...r, headers: { ...r.headers } }));
  }

  /** Resolves when every attempt queued so far (and any queued meanwhile) has been answered or has failed. */
  async flush(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.all([...this.inFlight]);
  }

  /** Fails the attempts under way (`aborted`) and drops the ones waiting; later deliveries go out again. */
  abortAll(): void {
    this.abort.abort();
    this.abort = new AbortController();
  }

  private schedule(d: OutboundDelivery, redelivery: boolean): void {
    const attempt = this.log.filter((r) => r.id === d.id).length + 1;
    const rec: WebhookDeliveryRecord = {
      id: d.id,
      event: d.event,
      action: d.action,
      url: d.url,
      attempt,
      redelivery,
      status: 'pending',
      statusCode: null,
      ok: false,
      error: null,
      queuedAt: this.opts.clock(),
      headers: { ...d.headers },
      body: d.body,
      responseBody: null,
    };
    this.log.push(rec);
    const signal = this.abort.signal;
    const previous = this.lanes.get(d.lane) ?? Promise.resolve();
    const run = previous.then(async () => {
      const r = signal.aborted
        ? { statusCode: null, error: 'aborted', responseBody: null }
        : await postOnce(d.url, d.headers, d.body, this.opts.timeoutMs, signal);
      rec.statusCode = r.statusCode;
      rec.status = r.statusCode === null ? 'error' : 'answered';
      rec.ok = r.error === null;
      rec.error = r.error;
      rec.responseBody = r.responseBody;
    });
    this.lanes.set(d.lane, run);
    this.inFlight.add(run);
    void run.finally(() => {
      this.inFlight.delete(run);
      if (this.lanes.get(d.lane) === run) this.lanes.delete(d.lane);
    });
  }
}

/**
 * What each simulator's webhook part shows its tests, the same for all three: the delivery
 * log, waiting for deliveries under way, a redelivery, and stopping them (at `stop()`).
 */
export abstract class WebhookSource {
  protected abstract readonly sender: WebhookSender;

  deliveries(): WebhookDeliveryRecord[] {
    return this.sender.records();
  }

  flush(): Promise<void> {
    return this.sender.flush();
  }

  redeliver(id: string): void {
    this.sender.redeliver(id);
  }

  abortAll(): void {
    this.sender.abortAll();
  }
}
