import { createHmac, randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { connectGitHub, createGitHubIntegration, startWeftStack } from '../tests/support/weft-stack';
import type { Figure } from './figure';
import { now, percentile, round1 } from './timing';
import { spawnWorkerProcess } from './worker-process';

const SECRET = 'bench-webhook-secret-0123456789';
const IN_FLIGHT = 32;
const SEQUENTIAL = 200;
const CHANGES = 30;
const WARM_UP_CHANGES = 3;

/**
 * Provider webhooks, two figures side by side in one run:
 * - `provider_webhook_intake`: `deliveries` signed GitHub deliveries (a real pull_request
 *   body, ~17 KB) sent one at a time (SEQUENTIAL), then IN_FLIGHT at a time to the intake of an in-process API: deliveries/s
 *   answered 2xx, answer time p50/p99, and how many are stored (nothing lost); then how fast
 *   a worker process processes them (from its start until the queue is empty).
 * - `provider_change_to_app_webhook`: a commit pushed at the GitHub simulator (which sends
 *   its delivery) until the app's endpoint receives the `forward` webhook and until GET
 *   /records shows it (the pull-requests sync's onWebhook saves it); and a repository added
 *   until the app receives the `sync` webhook of the repositories run it started. The worker
 *   in a process of its own, as deployed. Same machine, same clock.
 */
export async function providerWebhookFigures(deliveries: number): Promise<Figure[]> {
  const arrivals: Array<{ at: number; body: { type?: string; connectionId?: string; payload?: { after?: string }; syncName?: string } }> = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      arrivals.push({ at: now(), body: JSON.parse(Buffer.concat(chunks).toString('utf8')) });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const receiverUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  const stack = await startWeftStack({
    worker: false,
    github: { seed: 21, pullsPerRepo: 20 },
    egressAllow: { webhooks: [receiverUrl] },
    temporalCallTimeoutMs: 10_000,
  });
  try {
    await createGitHubIntegration(stack, 'github', { webhookSecret: SECRET });
    const intake = `${stack.apiUrl}/webhooks/providers/dev/github`;
    const figures: Figure[] = [await intakeFigure(stack, intake, deliveries)];

    await stack.api('PATCH', '/environment', { body: { webhook_url: receiverUrl, send_sync_completion_always: true } });
    stack.github.setAppWebhook({ url: intake, secret: SECRET });
    const worker = await spawnWorkerProcess(stack);
    try {
      // The worker's processor takes the intake's deliveries (unmatched: an installation nobody connected).
      const drainStart = now();
      while ((await stack.core.stores.providerDeliveries.due(new Date(Date.now() + 86_400_000), 1)).length > 0) await new Promise((r) => setTimeout(r, 50));
      figures[0].processed_per_s = round1(((SEQUENTIAL + deliveries) / (now() - drainStart)) * 1000);
      const made = await connectGitHub(stack, 'bench-gh', 1001);
      if (made.status !== 201) throw new Error(`POST /connections: ${made.status} ${JSON.stringify(made.body)}`);
      await stack.waitForSync('bench-gh', 'pull-requests', { providerConfigKey: 'github' });
      const repo = stack.github.repositories(1001)[0].full_name;
      const forwardMs: number[] = [];
      const recordMs: number[] = [];
      const syncMs: number[] = [];
      for (let i = 0; i < WARM_UP_CHANGES + CHANGES; i++) {
        const open = stack.github.pullRequests(repo, { state: 'open' })[0];
        const seen = arrivals.length;
        const t0 = now();
        stack.github.addCommits(repo, open.number, 1);
        const after = stack.github.pullRequests(repo, { state: 'open' }).find((p) => p.number === open.number)!;
        const forward = await arrival(arrivals, seen, (b) => b.type === 'forward' && b.payload?.after === after.head.sha);
        // The pull-requests sync saves it from the delivery (onWebhook): no call to GitHub, no run.
        const saved = await recordShows(stack, String(after.id), after.updated_at);
        // A repository added: the repositories sync runs, and its `sync` webhook tells the app.
        const repoSeen = arrivals.length;
        const t1 = now();
        stack.github.addRepository(1001);
        const sync = await arrival(arrivals, repoSeen, (b) => b.type === 'sync' && b.syncName === 'repositories');
        if (i >= WARM_UP_CHANGES) {
          forwardMs.push(forward - t0);
          recordMs.push(saved - t0);
          syncMs.push(sync - t1);
        }
        await stack.waitForSync('bench-gh', 'repositories', { providerConfigKey: 'github' });
      }
      figures.push({
        figure: 'provider_change_to_app_webhook',
        changes: CHANGES,
        forward_p50_ms: percentile(forwardMs, 50),
        forward_p99_ms: percentile(forwardMs, 99),
        record_p50_ms: percentile(recordMs, 50),
        record_p99_ms: percentile(recordMs, 99),
        sync_webhook_p50_ms: percentile(syncMs, 50),
        sync_webhook_p99_ms: percentile(syncMs, 99),
        note: 'forward and record: a commit pushed to an open pull request (pull_request synchronize) until the app receives the forward webhook, and until GET /records shows the pull request (saved by onWebhook); sync webhook: a repository added (installation_repositories) until the app receives the sync webhook of the repositories run it started',
      });
    } finally {
      await worker.stop();
    }
    return figures;
  } finally {
    await stack.shutdown();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

async function intakeFigure(stack: Awaited<ReturnType<typeof startWeftStack>>, intake: string, deliveries: number): Promise<Figure> {
  const repo = stack.github.repositories(1001)[0].full_name;
  const pull = stack.github.pullRequests(repo)[0];
  // The size of a real delivery: the pull request as the API gives it, with an installation nobody connected.
  const body = JSON.stringify({ action: 'synchronize', number: pull.number, pull_request: pull, installation: { id: 99_999 } });
  const signature = `sha256=${createHmac('sha256', SECRET).update(body).digest('hex')}`;
  const send = async () => {
    const res = await fetch(intake, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-github-event': 'pull_request', 'x-github-delivery': randomUUID(), 'x-hub-signature-256': signature },
      body,
    });
    await res.arrayBuffer();
    return res.status;
  };
  // One at a time first: the answer time of a delivery on an idle API.
  const alone: number[] = [];
  let refused = 0;
  for (let i = 0; i < SEQUENTIAL; i++) {
    const t = now();
    if ((await send()) !== 202) refused++;
    alone.push(now() - t);
  }
  const ms: number[] = [];
  let next = 0;
  const start = now();
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      while (next < deliveries) {
        next++;
        const t = now();
        const status = await send();
        ms.push(now() - t);
        if (status !== 202) refused++;
      }
    }),
  );
  const elapsedMs = now() - start;
  const stored = await stack.core.stores.db.collection('provider_deliveries').countDocuments({});
  return {
    figure: 'provider_webhook_intake',
    deliveries,
    in_flight: IN_FLIGHT,
    body_bytes: Buffer.byteLength(body),
    alone_p50_ms: percentile(alone, 50),
    alone_p99_ms: percentile(alone, 99),
    deliveries_per_s: round1((deliveries / elapsedMs) * 1000),
    answer_p50_ms: percentile(ms, 50),
    answer_p99_ms: percentile(ms, 99),
    refused,
    // Every delivery sent, one at a time and in flight, stored once.
    sent: SEQUENTIAL + deliveries,
    stored,
  };
}

/** When GET /records first shows the pull request with this `updated_at`. */
async function recordShows(stack: Awaited<ReturnType<typeof startWeftStack>>, id: string, updatedAt: string): Promise<number> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const res = await stack.api('GET', `/records?model=PullRequest&ids=${id}`, { headers: { 'connection-id': 'bench-gh', 'provider-config-key': 'github' } });
    const record = (res.body.records as Array<{ updated_at?: string }> | undefined)?.[0];
    if (record?.updated_at === updatedAt) return now();
    if (Date.now() > deadline) throw new Error(`GET /records did not show pull request ${id} at ${updatedAt} within 60 s`);
    await new Promise((r) => setTimeout(r, 2));
  }
}

/** When the app's endpoint received the first webhook after `from` that matches. */
async function arrival(
  arrivals: Array<{ at: number; body: Record<string, unknown> & { type?: string } }>,
  from: number,
  match: (body: { type?: string; payload?: { after?: string }; syncName?: string }) => boolean,
): Promise<number> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const hit = arrivals.slice(from).find((a) => match(a.body));
    if (hit) return hit.at;
    if (Date.now() > deadline)
      throw new Error(`no matching webhook within 60 s (after it: ${JSON.stringify(arrivals.slice(from).map((a) => ({ ...a.body, payload: undefined })))})`);
    await new Promise((r) => setTimeout(r, 2));
  }
}
