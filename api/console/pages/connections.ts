import type { Request, Response } from 'express';
import { z } from 'zod';
import { deleteConnection } from '../../../control';
import type { ConnectionDoc } from '../../../store/connections';
import { findConnection } from '../../../store/connection-lookup';
import type { ApiDeps } from '../../deps';
import { createConnectSession } from '../../services/connect-sessions';
import { parseInput } from '../../validate';
import { sessionOf } from '../auth';
import { consoleConnectionPage, type ConsoleConnectionFilters } from '../connection-listing';
import { html } from '../view/html';
import { actionButton, badge, connectionHref, consolePage, csrfField, noticeOf, pager, time } from '../view/layout';

const PAGE_SIZE = 50;

const listQuery = z.object({
  search: z.string().max(255).optional(),
  integration: z.string().max(255).optional(),
  /** `key=value`: connections carrying that tag. */
  tag: z
    .string()
    .max(600)
    .regex(/^[^=]+=.*$/, 'key=value')
    .optional(),
  cursor: z.string().max(512).optional(),
});

export function authBadge(c: ConnectionDoc) {
  return c.auth_status === 'needs_reauthorization' ? badge('needs re-authorization', 'bad') : badge('ok', 'ok');
}

/** GET /console/connections: searched by connection id, filtered by integration and tag, paged by cursor. */
export async function connectionsPage(deps: ApiDeps, req: Request, res: Response): Promise<void> {
  const session = sessionOf(res);
  const q = parseInput(listQuery, req.query, 'invalid_query_params');
  const filters: ConsoleConnectionFilters = { search: q.search || undefined, integration: q.integration || undefined, tag: q.tag || undefined };
  const [integrations, page] = await Promise.all([
    deps.stores.integrations.list(session.environment),
    consoleConnectionPage(deps, session.environment, filters, q.cursor, PAGE_SIZE),
  ]);
  res.type('html').send(
    consolePage({
      title: 'Connections',
      page: 'console-connections',
      section: 'connections',
      session,
      notice: noticeOf(req.query.notice),
      body: html`<h1>Connections</h1>
        <form class="filters" method="get" action="/console/connections">
          <label>Connection id <input name="search" value=${q.search ?? ''} placeholder="starts with…" /></label>
          <label
            >Integration
            <select name="integration">
              <option value="">All</option>
              ${integrations.map((i) => html`<option value=${i.unique_key} selected=${i.unique_key === q.integration}>${i.unique_key}</option>`)}
            </select></label
          >
          <label>Tag <input name="tag" value=${q.tag ?? ''} placeholder="key=value" /></label>
          <button type="submit">Search</button>
        </form>
        <div class="panel">
          <table>
            <thead>
              <tr><th>Connection</th><th>Integration</th><th>Auth</th><th>Tags</th><th>Created</th></tr>
            </thead>
            <tbody>
              ${
                page.connections.length
                  ? page.connections.map(
                      (c) => html`<tr data-connection=${c.connection_id}>
                      <td><a href=${connectionHref(c.provider_config_key, c.connection_id)}>${c.connection_id}</a></td>
                      <td>${c.provider_config_key}</td>
                      <td>${authBadge(c)}</td>
                      <td>${Object.entries(c.tags ?? {}).map(([k, v]) => html`<code>${k}=${v}</code> `)}</td>
                      <td>${time(c.created_at)}</td>
                    </tr>`,
                    )
                  : html`<tr><td colspan="5" class="muted">No connection matches.</td></tr>`
              }
            </tbody>
          </table>
          ${pager('/console/connections', { search: q.search, integration: q.integration, tag: q.tag, cursor: q.cursor }, page.nextCursor)}
        </div>
        ${
          session.role === 'admin' &&
          html`<section class="panel">
          <h2>New Connect link</h2>
          <p class="muted">A link for one of your users to connect an account (valid 30 minutes).</p>
          <form class="filters" method="post" action="/console/connect-links">
            ${csrfField(session)}
            <label
              >Integration
              <select name="integration">
                <option value="">Any</option>
                ${integrations.map((i) => html`<option value=${i.unique_key}>${i.unique_key}</option>`)}
              </select></label
            >
            <label>End user id <input name="end_user_id" required /></label>
            <label>End user email <input name="end_user_email" type="email" /></label>
            <button type="submit" data-action="create-connect-link">Create link</button>
          </form>
        </section>`
        }`,
    }),
  );
}

const connectLinkForm = z.object({
  integration: z.string().max(255).optional(),
  end_user_id: z.string().min(1).max(255),
  end_user_email: z.union([z.email(), z.literal('')]).optional(),
});

/** POST /console/connect-links: a Connect link for an end user, shown once (as `POST /connect/sessions` makes it). */
export async function createConnectLink(deps: ApiDeps, req: Request, res: Response): Promise<void> {
  const session = sessionOf(res);
  const form = parseInput(connectLinkForm, req.body, 'invalid_body');
  const created = await createConnectSession(deps, req, session.environment, {
    ...(form.integration ? { allowed_integrations: [form.integration] } : {}),
    end_user: { id: form.end_user_id, ...(form.end_user_email ? { email: form.end_user_email } : {}) },
  });
  linkPage(res, session, { title: 'Connect link', heading: `A Connect link for ${form.end_user_id}`, ...created });
}

/** POST /console/connections/:key/:id/reconnect: a link that re-authorizes this connection only (as `POST /connect/sessions/reconnect`). */
export async function createReconnectLink(deps: ApiDeps, req: Request, res: Response): Promise<void> {
  const session = sessionOf(res);
  const { connection } = await findConnection(deps.stores, session.environment, String(req.params.key), String(req.params.id));
  const created = await createConnectSession(deps, req, session.environment, {
    allowed_integrations: [connection.provider_config_key],
    connection_id: connection.connection_id,
  });
  linkPage(res, session, { title: 'Reconnect link', heading: `Re-authorize ${connection.connection_id}`, ...created });
}

function linkPage(
  res: Response,
  session: ReturnType<typeof sessionOf>,
  opts: { title: string; heading: string; connect_link: string; expires_at: string },
): void {
  res.type('html').send(
    consolePage({
      title: opts.title,
      page: 'console-connect-link',
      section: 'connections',
      session,
      body: html`<h1>${opts.heading}</h1>
        <div class="panel">
          <p>Send this link to the person; it works until ${time(opts.expires_at)} and is shown only now.</p>
          <input class="link" readonly value=${opts.connect_link} data-connect-link aria-label="Connect link" />
        </div>
        <p><a href="/console/connections">Back to the connections</a></p>`,
    }),
  );
}

/** GET /console/connections/:key/:id/delete: asks first. */
export async function confirmDeletePage(deps: ApiDeps, req: Request, res: Response): Promise<void> {
  const session = sessionOf(res);
  const { connection } = await findConnection(deps.stores, session.environment, String(req.params.key), String(req.params.id));
  res.type('html').send(
    consolePage({
      title: 'Delete connection',
      page: 'console-confirm-delete',
      section: 'connections',
      session,
      body: html`<h1>Delete <code>${connection.connection_id}</code>?</h1>
        <div class="panel">
          <p>Its credentials, syncs, schedules and every synced record go with it, and its webhook subscriptions are removed at the provider. This cannot be undone.</p>
          <div class="actions">
            ${actionButton(session, {
              action: connectionHref(connection.provider_config_key, connection.connection_id, '/delete'),
              label: 'Delete for good',
              kind: 'danger',
              name: 'confirm-delete',
            })}
            <a href=${connectionHref(connection.provider_config_key, connection.connection_id)}>Cancel</a>
          </div>
        </div>`,
    }),
  );
}

/** POST /console/connections/:key/:id/delete. */
export async function deleteConnectionAction(deps: ApiDeps, req: Request, res: Response): Promise<void> {
  const session = sessionOf(res);
  const { connection } = await findConnection(deps.stores, session.environment, String(req.params.key), String(req.params.id));
  await deleteConnection({ ...deps, publicUrl: deps.settings.publicUrl }, connection);
  res.redirect(303, '/console/connections?notice=connection-deleted');
}
