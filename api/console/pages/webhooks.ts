import type { Request, Response } from 'express';
import { z } from 'zod';
import type { ApiDeps } from '../../deps';
import { bulkReplayBody, listWebhookEventsQuery } from '../../schemas/webhooks';
import { webhookDeps } from '../../services/connection-authorization';
import { getWebhookEvent, listWebhookEvents, replayFailedWebhookEvents, replayWebhookEvent } from '../../services/webhook-events';
import { parseInput } from '../../validate';
import { sessionOf } from '../auth';
import { html } from '../view/html';
import { actionButton, badge, consolePage, csrfField, filledFields, json, noticeOf, pager, time } from '../view/layout';

const PAGE_SIZE = 50;

const eventsForm = z.object({
  status: z.string().max(20).optional(),
  type: z.string().max(40).optional(),
  connection_id: z.string().max(255).optional(),
  cursor: z.string().max(512).optional(),
});

const STATUS_TONE = { delivered: 'ok', failed: 'bad', pending: 'warn' } as const;

function eventHref(id: string): string {
  return `/console/webhooks/${encodeURIComponent(id)}`;
}

/** GET /console/webhooks: the environment's events to the app, newest first; the failed ones of a range can be replayed. */
export async function webhooksPage(deps: ApiDeps, req: Request, res: Response): Promise<void> {
  const session = sessionOf(res);
  const form = parseInput(eventsForm, req.query, 'invalid_query_params');
  const filters = filledFields(form);
  const q = parseInput(listWebhookEventsQuery, { ...filters, limit: String(PAGE_SIZE) }, 'invalid_query_params');
  const page = await listWebhookEvents(deps, session.environment, q);
  const dayAgo = new Date(Date.now() - 86_400_000).toISOString().slice(0, 16);
  const now = new Date(Date.now() + 60_000).toISOString().slice(0, 16);
  res.type('html').send(
    consolePage({
      title: 'Webhook events',
      page: 'console-webhooks',
      section: 'webhooks',
      session,
      notice: noticeOf(req.query.notice),
      body: html`<h1>Webhook events</h1>
        <form class="filters" method="get" action="/console/webhooks">
          <label
            >Status
            <select name="status">
              <option value="">Any</option>
              ${(['pending', 'delivered', 'failed'] as const).map((s) => html`<option value=${s} selected=${s === form.status}>${s}</option>`)}
            </select></label
          >
          <label>Type <input name="type" value=${form.type ?? ''} placeholder="sync, auth, forward…" /></label>
          <label>Connection id <input name="connection_id" value=${form.connection_id ?? ''} /></label>
          <button type="submit">Filter</button>
        </form>
        <div class="panel">
          <table>
            <thead>
              <tr><th>Created</th><th>Type</th><th>Connection</th><th>Status</th><th class="num">Failed attempts</th><th>Last error</th></tr>
            </thead>
            <tbody>
              ${
                page.events.length
                  ? page.events.map(
                      (e) => html`<tr data-event=${e.id} data-status=${e.status}>
                      <td><a href=${eventHref(e.id)}>${time(e.created_at)}</a></td>
                      <td><code>${e.type}</code></td>
                      <td>${e.connection_id ?? '—'}</td>
                      <td>${badge(e.status, STATUS_TONE[e.status])}${e.replays ? html` <span class="muted">replayed ${e.replays}×</span>` : null}</td>
                      <td class="num">${e.attempts}</td>
                      <td>${e.last_error ?? ''}</td>
                    </tr>`,
                    )
                  : html`<tr><td colspan="6" class="muted">No events match.</td></tr>`
              }
            </tbody>
          </table>
          ${pager('/console/webhooks', { ...filters, cursor: form.cursor }, page.next_cursor)}
        </div>
        ${
          session.role === 'admin' &&
          html`<section class="panel">
          <h2>Replay the failed events of a range</h2>
          <form class="filters" method="post" action="/console/webhooks/replay-failed">
            ${csrfField(session)}
            <label>From (UTC) <input name="from" type="datetime-local" value=${dayAgo} required /></label>
            <label>To (UTC) <input name="to" type="datetime-local" value=${now} required /></label>
            <button type="submit" data-action="replay-failed">Replay failed events</button>
          </form>
        </section>`
        }`,
    }),
  );
}

/** GET /console/webhooks/:id: the event's body and every attempt to deliver it. */
export async function webhookEventPage(deps: ApiDeps, req: Request, res: Response): Promise<void> {
  const session = sessionOf(res);
  const event = await getWebhookEvent(deps, session.environment, String(req.params.id));
  res.type('html').send(
    consolePage({
      title: `Event ${event.id}`,
      page: 'console-webhook-event',
      section: 'webhooks',
      session,
      notice: noticeOf(req.query.notice),
      body: html`<h1>Event <code>${event.id}</code></h1>
        <div class="panel" data-event=${event.id} data-status=${event.status}>
          <dl class="fields">
            <dt>Type</dt><dd><code>${event.type}</code></dd>
            <dt>Status</dt><dd>${badge(event.status, STATUS_TONE[event.status])}</dd>
            <dt>Created</dt><dd>${time(event.created_at)}</dd>
            <dt>Settled</dt><dd>${time(event.settled_at)}</dd>
            <dt>Replays</dt><dd>${event.replays}</dd>
          </dl>
          <div class="actions">${event.status !== 'pending' && actionButton(session, { action: `${eventHref(event.id)}/replay`, label: 'Replay', name: 'replay' })}</div>
        </div>
        <h2>Attempts</h2>
        <div class="panel">
          <table>
            <thead>
              <tr><th>When</th><th>Delivery</th><th>Target</th><th>URL</th><th>Status</th><th class="num">Duration</th><th>Answer</th></tr>
            </thead>
            <tbody>
              ${event.delivery_attempts.map(
                (a) => html`<tr data-attempt=${`${a.replay}:${a.attempt}`}>
                  <td>${time(a.at)}</td>
                  <td>${a.replay ? `replay ${a.replay}` : 'first'}, attempt ${a.attempt}</td>
                  <td>${a.target}</td>
                  <td><code>${a.url}</code></td>
                  <td>${a.status === null ? badge('no answer', 'bad') : badge(String(a.status), a.status < 300 ? 'ok' : 'bad')} ${a.error ?? ''}</td>
                  <td class="num">${a.duration_ms} ms</td>
                  <td>${a.response_excerpt ? html`<pre>${a.response_excerpt}</pre>` : ''}</td>
                </tr>`,
              )}
            </tbody>
          </table>
        </div>
        <h2>Body</h2>
        <div class="panel">${json(event.payload)}</div>`,
    }),
  );
}

/** POST /console/webhooks/:id/replay. */
export async function replayEventAction(deps: ApiDeps, req: Request, res: Response): Promise<void> {
  const session = sessionOf(res);
  const id = String(req.params.id);
  await replayWebhookEvent(webhookDeps(deps), session.environment, id);
  res.redirect(303, `${eventHref(id)}?notice=event-replayed`);
}

const replayForm = z.object({ from: z.string().min(1).max(40), to: z.string().min(1).max(40) });

/** POST /console/webhooks/replay-failed: the form's range (UTC, as datetime-local sends it) to POST /webhooks/events/replay. */
export async function replayFailedAction(deps: ApiDeps, req: Request, res: Response): Promise<void> {
  const session = sessionOf(res);
  const form = parseInput(replayForm, req.body, 'invalid_body');
  const utc = (v: string) => (/[zZ]|[+-]\d\d:\d\d$/.test(v) ? v : `${v}${v.length === 16 ? ':00' : ''}Z`);
  const body = parseInput(bulkReplayBody, { from: utc(form.from), to: utc(form.to) }, 'invalid_body');
  const result = await replayFailedWebhookEvents(webhookDeps(deps), session.environment, body);
  res.type('html').send(
    consolePage({
      title: 'Replayed',
      page: 'console-replayed',
      section: 'webhooks',
      session,
      body: html`<h1>Replayed <span data-replayed=${result.replayed}>${result.replayed}</span> failed event${result.replayed === 1 ? '' : 's'}</h1>
        <div class="panel">
          ${result.ids.length ? html`<ul>${result.ids.map((id) => html`<li><a href=${eventHref(id)}>${id}</a></li>`)}</ul>` : html`<p class="muted">No failed event in that range.</p>`}
          ${result.next_cursor ? html`<p>More failed events remain in the range: submit the form again to replay the next batch.</p>` : null}
        </div>
        <p><a href="/console/webhooks">Back to the events</a></p>`,
    }),
  );
}
