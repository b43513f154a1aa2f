import type { Request, Response } from 'express';
import { countSyncRunsByInterval, type RunCounts } from '../../../control';
import { mapBounded } from '../../../common/map-bounded';
import type { ApiDeps } from '../../deps';
import { integrationStatus, type IntegrationStatus } from '../../services/integration-status';
import { sessionOf } from '../auth';
import { html } from '../view/html';
import { badge, connectionHref, consolePage, hrefWith, time } from '../view/layout';

const HOUR_MS = 3_600_000;

function percent(rate: number): string {
  return `${(rate * 100).toFixed(rate > 0 && rate < 0.01 ? 2 : 1)} %`;
}

function ms(value: number | null): string {
  return value === null ? '—' : `${Math.round(value)} ms`;
}

/** GET /console/integrations: every integration of the environment with its status figures. */
export async function integrationsPage(deps: ApiDeps, _req: Request, res: Response): Promise<void> {
  const session = sessionOf(res);
  const integrations = await deps.stores.integrations.list(session.environment);
  const statuses = await mapBounded(integrations, 4, (i) => integrationStatus(deps, session.environment, i.unique_key, { errors: 0 }));
  const rows = integrations.map((integration, i) => {
    const s = statuses[i];
    return html`<tr data-integration=${integration.unique_key}>
      <td><a href=${`/console/integrations/${encodeURIComponent(integration.unique_key)}`}>${integration.display_name}</a><br /><code>${integration.unique_key}</code></td>
      <td>${integration.provider}</td>
      <td class="num" data-figure="connections">${s.connections.total}</td>
      <td>${authBadges(s)}</td>
      <td>${syncBadges(s)}</td>
      <td class="num" data-figure="requests">${s.last_hour.requests}</td>
      <td class="num" data-figure="error-rate">${percent(s.last_hour.error_rate)}</td>
      <td class="num" data-figure="p95">${ms(s.last_hour.latency_ms.p95)}</td>
    </tr>`;
  });
  res.type('html').send(
    consolePage({
      title: 'Integrations',
      page: 'console-integrations',
      section: 'integrations',
      session,
      body: html`<h1>Integrations</h1>
        <div class="panel">
          <table>
            <thead>
              <tr>
                <th>Integration</th>
                <th>Provider</th>
                <th class="num">Connections</th>
                <th>Auth</th>
                <th>Syncs (last run)</th>
                <th class="num">Calls, last hour</th>
                <th class="num">Error rate</th>
                <th class="num">p95</th>
              </tr>
            </thead>
            <tbody>
              ${rows.length ? rows : html`<tr><td colspan="8" class="muted">No integration in this environment yet.</td></tr>`}
            </tbody>
          </table>
        </div>`,
    }),
  );
}

function authBadges(s: IntegrationStatus) {
  const { ok, needs_reauthorization } = s.connections.by_auth_state;
  return html`${badge(`${ok} ok`, 'ok')} ${needs_reauthorization ? badge(`${needs_reauthorization} to re-authorize`, 'bad') : null}`;
}

function syncBadges(s: IntegrationStatus) {
  const by = s.syncs.by_last_state;
  return html`${badge(`${by.SUCCESS} ok`, 'ok')} ${by.ERROR ? badge(`${by.ERROR} failing`, 'bad') : null}
  ${by.RUNNING ? badge(`${by.RUNNING} running`, 'warn') : null} ${by.NEVER_RUN ? badge(`${by.NEVER_RUN} never run`, 'muted') : null}
  ${s.syncs.paused ? badge(`${s.syncs.paused} paused`, 'muted') : null}`;
}

/** GET /console/integrations/:key: the status figures, the last 24 hours charted, the latest errors. */
export async function integrationPage(deps: ApiDeps, req: Request, res: Response): Promise<void> {
  const session = sessionOf(res);
  const key = String(req.params.key);
  const status = await integrationStatus(deps, session.environment, key, { errors: 20 });
  const now = Date.now();
  const end = Math.ceil(now / HOUR_MS) * HOUR_MS;
  const bounds = Array.from({ length: 25 }, (_, i) => new Date(end - (24 - i) * HOUR_MS));
  // This process's own counts of the last seconds first (other processes' follow within seconds).
  await deps.stores.requestLogs.hours.flush();
  const [runs, calls] = await Promise.all([
    countSyncRunsByInterval(deps, session.environment, key, bounds).catch(() => null),
    deps.stores.requestLogs.hours.read(session.environment, key, bounds[0], 24),
  ]);
  const f = status.last_hour;
  res.type('html').send(
    consolePage({
      title: key,
      page: 'console-integration',
      section: 'integrations',
      session,
      body: html`<h1>Integration <code>${key}</code></h1>
        <div class="figures">
          ${figure('connections', status.connections.total, 'connections')}
          ${figure('needs-reauthorization', status.connections.by_auth_state.needs_reauthorization, 'to re-authorize')}
          ${figure('syncs-failing', status.syncs.by_last_state.ERROR, 'syncs failing')}
          ${figure('syncs-running', status.syncs.by_last_state.RUNNING ?? '—', 'syncs running')}
          ${figure('requests', f.requests, 'calls, last hour')}
          ${figure('error-rate', percent(f.error_rate), 'error rate, last hour')}
          ${figure('p95', ms(f.latency_ms.p95), 'p95 latency, last hour')}
        </div>
        <section class="panel chart" data-chart="24h">
          <h2>Last 24 hours</h2>
          ${activityChart(bounds, runs, calls)}
        </section>
        <section class="panel">
          <h2>Latest errors</h2>
          ${
            status.latest_errors.length
              ? html`<table>
                <thead>
                  <tr><th>When</th><th>Connection</th><th>Kind</th><th>Code</th><th>Message</th></tr>
                </thead>
                <tbody>
                  ${status.latest_errors.map(
                    (e) => html`<tr data-error=${e.code}>
                      <td>${time(e.at)}</td>
                      <td><a href=${connectionHref(key, e.connection_id)}>${e.connection_id}</a></td>
                      <td>${e.type === 'sync' ? `sync ${e.sync?.name ?? ''}` : 'auth'}</td>
                      <td><code>${e.code}</code></td>
                      <td>${e.message}</td>
                    </tr>`,
                  )}
                </tbody>
              </table>`
              : html`<p class="muted">No errors.</p>`
          }
        </section>
        <p><a href=${hrefWith('/console/connections', { integration: key })}>This integration’s connections</a></p>`,
    }),
  );
}

function figure(name: string, value: string | number, label: string) {
  return html`<div class="figure" data-figure=${name}><b>${value}</b><span>${label}</span></div>`;
}

/**
 * Runs started and third-party calls per hour, the failed ones of each in red, as an SVG of
 * plain rectangles: sized by attributes, coloured by the stylesheet (no inline style, no script).
 */
function activityChart(bounds: Date[], runs: RunCounts[] | null, calls: Array<{ calls: number; errors: number }>) {
  const W = 720;
  const H = 140;
  const slot = W / calls.length;
  const maxRuns = Math.max(1, ...(runs ?? []).map((r) => r.started));
  const maxCalls = Math.max(1, ...calls.map((c) => c.calls));
  const half = H / 2 - 6;
  const bars = calls.map((c, i) => {
    const x = i * slot + 2;
    const w = slot - 4;
    const r = runs?.[i];
    const runH = r ? (r.started / maxRuns) * half : 0;
    const failH = r ? (r.failed / maxRuns) * half : 0;
    const callH = (c.calls / maxCalls) * half;
    const errorH = (c.errors / maxCalls) * half;
    const hour = bounds[i].toISOString().slice(11, 16);
    return html`<g
      data-hour=${bounds[i].toISOString()}
      data-runs=${r?.started ?? ''}
      data-failed=${r?.failed ?? ''}
      data-calls=${c.calls}
      data-call-errors=${c.errors}
    >
      <title>${`${hour} UTC: ${r ? `${r.started} runs (${r.failed} failed), ` : ''}${c.calls} calls (${c.errors} failed)`}</title>
      <rect class="runs" x=${x} y=${half - runH} width=${w} height=${runH} />
      <rect class="failed" x=${x} y=${half - failH} width=${w} height=${failH} />
      <rect class="calls" x=${x} y=${H - callH} width=${w} height=${callH} />
      <rect class="failed" x=${x} y=${H - errorH} width=${w} height=${errorH} />
    </g>`;
  });
  return html`<svg viewBox=${`0 0 ${W} ${H}`} role="img" aria-label="Sync runs and third-party calls per hour, last 24 hours">${bars}</svg>
    <div class="legend">
      <span>Top: sync runs per hour (max ${runs ? maxRuns : '—'})${runs ? '' : ' — Temporal did not answer'}</span>
      <span>Bottom: third-party calls per hour (max ${maxCalls})</span>
      <span>Failed ones in red</span>
    </div>`;
}
