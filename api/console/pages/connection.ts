import type { Request, Response } from 'express';
import { z } from 'zod';
import { requestSyncOperation, syncStatus } from '../../../control';
import { findConnection } from '../../../store/connection-lookup';
import type { ConsoleSessionDoc } from '../../../store/console-sessions';
import type { SyncRunDoc } from '../../../store/sync-runs';
import { temporalRunUrl } from '../../../webhooks/chat-alert-messages';
import type { ApiDeps } from '../../deps';
import { recordModels } from '../../services/record-listing';
import { parseInput } from '../../validate';
import { sessionOf } from '../auth';
import { html } from '../view/html';
import { actionButton, badge, connectionHref, consolePage, hrefWith, json, noticeOf, time } from '../view/layout';
import { authBadge } from './connections';

/** Runs listed per sync. */
const RECENT_RUNS = 5;

const STATUS_TONE: Record<string, 'ok' | 'bad' | 'warn'> = { SUCCESS: 'ok', ERROR: 'bad', RUNNING: 'warn' };
const toneOf = (status: string) => STATUS_TONE[status] ?? 'muted';

/** GET /console/connections/:key/:id: the connection, its syncs with their latest runs, and what can be done to them. */
export async function connectionPage(deps: ApiDeps, req: Request, res: Response): Promise<void> {
  const session = sessionOf(res);
  const { connection } = await findConnection(deps.stores, session.environment, String(req.params.key), String(req.params.id));
  const status = await syncStatus(deps, {
    environment: session.environment,
    providerConfigKey: connection.provider_config_key,
    connectionId: connection.connection_id,
    syncs: [],
  });
  const runs = await Promise.all(status.syncs.map((s) => deps.stores.syncRuns.recent(connection._id, s.name, s.variant, RECENT_RUNS)));
  const base = connectionHref(connection.provider_config_key, connection.connection_id);
  res.type('html').send(
    consolePage({
      title: connection.connection_id,
      page: 'console-connection',
      section: 'connections',
      session,
      notice: noticeOf(req.query.notice),
      body: html`<h1>Connection <code>${connection.connection_id}</code></h1>
        <div class="panel">
          <dl class="fields">
            <dt>Integration</dt><dd><a href=${`/console/integrations/${encodeURIComponent(connection.provider_config_key)}`}>${connection.provider_config_key}</a> (${connection.provider})</dd>
            <dt>Auth</dt><dd data-auth=${connection.auth_status}>${authBadge(connection)} ${connection.last_auth_error ? html`<span class="muted">${connection.last_auth_error}</span>` : null}</dd>
            <dt>Created</dt><dd>${time(connection.created_at)}</dd>
            <dt>Tags</dt><dd data-tags>${Object.keys(connection.tags ?? {}).length ? json(connection.tags) : html`<span class="muted">none</span>`}</dd>
            <dt>Metadata</dt><dd data-metadata>${Object.keys(connection.metadata ?? {}).length ? json(connection.metadata) : html`<span class="muted">none</span>`}</dd>
          </dl>
          <div class="actions">
            ${actionButton(session, { action: `${base}/reconnect`, label: 'Create reconnect link', kind: 'secondary', name: 'reconnect' })}
            ${session.role === 'admin' && html`<a href=${`${base}/delete`} data-action="delete">Delete…</a>`}
          </div>
        </div>
        <h2>Syncs</h2>
        <div class="panel">
          <table>
            <thead>
              <tr><th>Sync</th><th>Status</th><th>Last result</th><th>Finished</th><th>Next run</th><th>Frequency</th><th></th></tr>
            </thead>
            <tbody>
              ${status.syncs.map(
                (s) => html`<tr data-sync=${s.name} data-variant=${s.variant} data-status=${s.status}>
                  <td><strong>${s.name}</strong>${s.variant !== 'base' ? html` <code>${s.variant}</code>` : null}</td>
                  <td>${badge(s.status, toneOf(s.status))}${s.latestError ? html`<br /><code>${s.latestError.code}</code> ${s.latestError.message}` : null}</td>
                  <td>${s.latestResult ? Object.entries(s.latestResult).map(([model, c]) => html`<div><code>${model}</code> +${c.added} ~${c.updated} −${c.deleted}</div>`) : '—'}</td>
                  <td>${time(s.finishedAt)}</td>
                  <td>${time(s.nextScheduledSyncAt)}</td>
                  <td>${s.frequency ?? '—'}</td>
                  <td><div class="actions">${syncActions(session, base, s)}</div></td>
                </tr>`,
              )}
            </tbody>
          </table>
        </div>
        <h2>Latest runs</h2>
        <div class="panel">
          <table>
            <thead>
              <tr><th>Sync</th><th>Started</th><th>Type</th><th>Status</th><th>Result</th><th>History</th></tr>
            </thead>
            <tbody>
              ${runs.flat().map((r) => runRow(deps, r))}
            </tbody>
          </table>
        </div>
        <h2>Records</h2>
        <div class="panel actions">
          ${recordModels(deps.registry, connection.provider).map(
            (m) => html`<a href=${hrefWith(`${base}/records`, { model: m.model })} data-model=${m.model}>${m.model}${m.unified ? ' (unified)' : ''}</a>`,
          )}
        </div>
        <p><a href=${hrefWith('/console/logs', { connection_id: connection.connection_id, integration: connection.provider_config_key })}>This connection’s request log</a></p>`,
    }),
  );
}

function syncActions(session: ConsoleSessionDoc, base: string, s: { name: string; variant: string; status: string }) {
  const fields = { sync: s.name, variant: s.variant };
  const op = (kind: string, label: string, style: 'primary' | 'secondary' | 'danger' = 'secondary') =>
    actionButton(session, { action: `${base}/syncs`, label, fields: { ...fields, op: kind }, kind: style, name: `${kind}:${s.name}` });
  return html`${op('trigger', 'Run now', 'primary')} ${s.status === 'PAUSED' ? op('resume', 'Resume') : op('pause', 'Pause')} ${op('reset', 'Reset', 'danger')}`;
}

function runRow(deps: ApiDeps, r: SyncRunDoc) {
  const ui = deps.settings.console;
  return html`<tr data-run=${r._id}>
    <td>${r.sync_name}</td>
    <td>${time(r.started_at)}</td>
    <td>${r.type}</td>
    <td>${badge(r.status, toneOf(r.status))}${r.error ? html` <code>${r.error.code}</code>` : null}</td>
    <td>${r.result ? Object.entries(r.result).map(([model, c]) => html`<div><code>${model}</code> +${c.added} ~${c.updated} −${c.deleted}</div>`) : '—'}</td>
    <td>${ui ? html`<a href=${temporalRunUrl(ui.temporalUiUrl, ui.temporalNamespace, r.workflow_id, r._id)} data-temporal-link>Temporal UI</a>` : '—'}</td>
  </tr>`;
}

const syncForm = z.object({
  sync: z.string().min(1).max(255),
  variant: z.string().min(1).max(255).default('base'),
  op: z.enum(['trigger', 'pause', 'resume', 'reset']),
});

const NOTICE_OF = { trigger: 'sync-triggered', pause: 'sync-paused', resume: 'sync-resumed', reset: 'sync-reset' } as const;

/** POST /console/connections/:key/:id/syncs: run now, pause, resume or reset one sync, as POST /sync/trigger, /sync/pause and /sync/start do. */
export async function syncAction(deps: ApiDeps, req: Request, res: Response): Promise<void> {
  const session = sessionOf(res);
  const form = parseInput(syncForm, req.body, 'invalid_body');
  const { connection } = await findConnection(deps.stores, session.environment, String(req.params.key), String(req.params.id));
  await requestSyncOperation(deps, {
    environment: session.environment,
    providerConfigKey: connection.provider_config_key,
    connectionId: connection.connection_id,
    syncs: [{ name: form.sync, variant: form.variant }],
    kind: form.op === 'resume' ? 'start' : form.op === 'reset' ? 'trigger' : form.op,
    reset: form.op === 'reset',
    emptyCache: false,
  });
  res.redirect(303, `${connectionHref(connection.provider_config_key, connection.connection_id)}?notice=${NOTICE_OF[form.op]}`);
}
