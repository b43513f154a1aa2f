import type { Request, Response } from 'express';
import { z } from 'zod';
import { NotFoundError } from '../../../common/errors';
import type { RequestLogEntry } from '../../../store/request-logs';
import type { ApiDeps } from '../../deps';
import { listLogsQuery } from '../../schemas/logs';
import { listRequestLogs } from '../../services/request-log-listing';
import { parseInput } from '../../validate';
import { sessionOf } from '../auth';
import { html } from '../view/html';
import { badge, connectionHref, consolePage, filledFields, hrefWith, pager, time } from '../view/layout';

const PAGE_SIZE = 50;

/** The filters as the form sends them: empty fields are no filter. */
const logsForm = z.object({
  integration: z.string().max(255).optional(),
  connection_id: z.string().max(255).optional(),
  operation: z.string().max(255).optional(),
  status: z.string().max(10).optional(),
  cursor: z.string().max(512).optional(),
});

function statusBadge(status: number | null, error: string | null) {
  if (status === null) return badge(error ? 'no answer' : '—', 'bad');
  return badge(String(status), status >= 500 || status === 429 ? 'bad' : status >= 400 ? 'warn' : 'ok');
}

/** GET /console/logs: GET /logs's filters, newest first. */
export async function logsPage(deps: ApiDeps, req: Request, res: Response): Promise<void> {
  const session = sessionOf(res);
  const form = parseInput(logsForm, req.query, 'invalid_query_params');
  const filters = filledFields(form);
  const q = parseInput(listLogsQuery, { ...filters, limit: String(PAGE_SIZE) }, 'invalid_query_params');
  const page = await listRequestLogs(deps.stores, session.environment, q);
  res.type('html').send(
    consolePage({
      title: 'Request log',
      page: 'console-logs',
      section: 'logs',
      session,
      body: html`<h1>Request log</h1>
        <form class="filters" method="get" action="/console/logs">
          <label>Integration <input name="integration" value=${form.integration ?? ''} /></label>
          <label>Connection id <input name="connection_id" value=${form.connection_id ?? ''} /></label>
          <label>Operation <input name="operation" value=${form.operation ?? ''} placeholder="sync:user-files, proxy…" /></label>
          <label>Status <input name="status" value=${form.status ?? ''} placeholder="error, 4xx, 429…" /></label>
          <button type="submit">Filter</button>
        </form>
        <div class="panel">
          <table>
            <thead>
              <tr><th>When</th><th>Integration</th><th>Connection</th><th>Operation</th><th>Request</th><th>Status</th><th class="num">Duration</th></tr>
            </thead>
            <tbody>
              ${
                page.logs.length
                  ? page.logs.map(
                      (e) => html`<tr data-log=${e.id}>
                      <td><a href=${hrefWith('/console/logs/entry', { id: e.id })}>${time(e.at)}</a></td>
                      <td>${e.integration}</td>
                      <td>${e.connection_id ? html`<a href=${connectionHref(e.integration, e.connection_id)}>${e.connection_id}</a>` : '—'}</td>
                      <td><code>${e.operation}</code></td>
                      <td><code>${e.method}</code> ${shortUrl(e.url)}</td>
                      <td>${statusBadge(e.status, e.error)}</td>
                      <td class="num">${e.duration_ms} ms</td>
                    </tr>`,
                    )
                  : html`<tr><td colspan="7" class="muted">Nothing logged matches.</td></tr>`
              }
            </tbody>
          </table>
          ${pager('/console/logs', { ...filters, cursor: form.cursor }, page.next_cursor)}
        </div>`,
    }),
  );
}

function shortUrl(url: string): string {
  return url.length > 90 ? `${url.slice(0, 90)}…` : url;
}

/** GET /console/logs/entry?id=: one request as logged (already redacted when it was written). */
export async function logEntryPage(deps: ApiDeps, req: Request, res: Response): Promise<void> {
  const session = sessionOf(res);
  const { id } = parseInput(z.object({ id: z.string().min(1).max(300) }), req.query, 'invalid_query_params');
  const entry = await deps.stores.requestLogs.get(session.environment, id);
  if (!entry) throw new NotFoundError('unknown_log_entry', `No request log entry ${id} in this environment (entries are kept WEFT_REQUEST_LOG_TTL_DAYS days).`);
  res.type('html').send(
    consolePage({
      title: 'Request',
      page: 'console-log-entry',
      section: 'logs',
      session,
      body: html`<h1>${entry.method} request to ${entry.integration}</h1>
        <div class="panel">${entryFields(entry)}</div>
        <p><a href="/console/logs">Back to the request log</a></p>`,
    }),
  );
}

function entryFields(e: RequestLogEntry) {
  return html`<dl class="fields">
    <dt>When</dt><dd>${time(e.at)}</dd>
    <dt>Operation</dt><dd><code>${e.operation}</code>${e.run_id ? html` (run <code>${e.run_id}</code>)` : null}</dd>
    <dt>Connection</dt><dd>${e.connection_id ? html`<a href=${connectionHref(e.integration, e.connection_id)}>${e.connection_id}</a>` : '—'}</dd>
    <dt>Request</dt><dd data-request><code>${e.method} ${e.url}</code></dd>
    <dt>Answer</dt><dd data-answer>${statusBadge(e.status, e.error)} ${e.error ? html`<code>${e.error}</code>` : null}</dd>
    <dt>Duration</dt><dd>${e.duration_ms} ms (attempt ${e.attempt}${e.rate_limit_wait_ms ? `, waited ${e.rate_limit_wait_ms} ms for the rate limit` : ''})</dd>
    <dt>Provider request id</dt><dd>${e.provider_request_id ? html`<code>${e.provider_request_id}</code>` : '—'}</dd>
  </dl>`;
}
