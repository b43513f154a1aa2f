import type { ConsoleSessionDoc } from '../../../store/console-sessions';
import { html, renderDocument, type Children } from './html';

/** The console's sections, in the navigation's order. */
const SECTIONS = [
  { id: 'integrations', href: '/console/integrations', label: 'Integrations' },
  { id: 'connections', href: '/console/connections', label: 'Connections' },
  { id: 'logs', href: '/console/logs', label: 'Request log' },
  { id: 'webhooks', href: '/console/webhooks', label: 'Webhook events' },
] as const;

export type Section = (typeof SECTIONS)[number]['id'];

/**
 * What a change did, shown once on the page it led to (`?notice=`): by code, from this list
 * only, so a link cannot make the console say anything else.
 */
const NOTICES = {
  'sync-triggered': 'The sync was started.',
  'sync-paused': 'The sync’s schedule is paused.',
  'sync-resumed': 'The sync’s schedule is resumed.',
  'sync-reset': 'The sync starts again from scratch.',
  'connection-deleted': 'The connection, its syncs and records were deleted.',
  'event-replayed': 'The event is being delivered again.',
  'signed-out': 'You are signed out.',
} as const;

export type NoticeCode = keyof typeof NOTICES;

export function noticeOf(value: unknown): { code: NoticeCode; text: string } | null {
  return typeof value === 'string' && Object.hasOwn(NOTICES, value) ? { code: value as NoticeCode, text: NOTICES[value as NoticeCode] } : null;
}

export interface PageOptions {
  title: string;
  /** `data-page`, by which tests and scripts tell pages apart. */
  page: string;
  section?: Section;
  session?: ConsoleSessionDoc;
  notice?: { code: string; text: string } | null;
  body: Children;
}

export function consolePage(opts: PageOptions): string {
  const { session } = opts;
  return renderDocument(html`<html lang="en">
    <head>
      <meta charset="utf-8" />
      <meta name="viewport" content="width=device-width, initial-scale=1" />
      <meta name="referrer" content="no-referrer" />
      <title>${opts.title} · Weft console</title>
      <link rel="stylesheet" href="/console/assets/console.css" />
    </head>
    <body>
      ${
        session &&
        html`<header class="top">
        <span class="brand">Weft</span>
        <nav aria-label="Console">
          ${SECTIONS.map((s) => html`<a href=${s.href} aria-current=${s.id === opts.section ? 'page' : undefined}>${s.label}</a>`)}
        </nav>
        <span class="who" data-environment=${session.environment} data-role=${session.role}>
          <span>Environment <strong>${session.environment}</strong></span>
          <span class=${`badge ${session.role === 'admin' ? 'ok' : 'muted'}`}>${session.role === 'admin' ? 'admin' : 'read-only'}</span>
          <form class="inline" method="post" action="/console/sign-out">
            ${csrfField(session)}
            <button class="secondary" type="submit">Sign out</button>
          </form>
        </span>
      </header>`
      }
      <main data-page=${opts.page}>
        ${opts.notice && html`<p class="notice" role="status" data-notice=${opts.notice.code}>${opts.notice.text}</p>`}
        ${opts.body}
      </main>
    </body>
  </html>`);
}

/** The hidden field every form of a signed-in page carries (checked by requireCsrf). */
export function csrfField(session: ConsoleSessionDoc) {
  return html`<input type="hidden" name="_csrf" value=${session.csrf_token} />`;
}

/**
 * A button that posts one change: only admins see it (a read-only operator's request is
 * refused anyway, see requireAdmin).
 */
export function actionButton(
  session: ConsoleSessionDoc,
  opts: { action: string; label: string; fields?: Record<string, string>; kind?: 'primary' | 'secondary' | 'danger'; name?: string },
) {
  if (session.role !== 'admin') return null;
  return html`<form class="inline" method="post" action=${opts.action}>
    ${csrfField(session)} ${Object.entries(opts.fields ?? {}).map(([k, v]) => html`<input type="hidden" name=${k} value=${v} />`)}
    <button type="submit" class=${opts.kind === 'primary' || !opts.kind ? undefined : opts.kind} data-action=${opts.name ?? opts.label}>${opts.label}</button>
  </form>`;
}

export function badge(text: string, tone: 'ok' | 'bad' | 'warn' | 'muted') {
  return html`<span class=${`badge ${tone}`}>${text}</span>`;
}

export function time(at: Date | string | null | undefined) {
  if (!at) return html`<span class="muted">—</span>`;
  const iso = typeof at === 'string' ? at : at.toISOString();
  return html`<time datetime=${iso}>${iso.replace('T', ' ').replace(/\.\d+Z$/, ' UTC')}</time>`;
}

export function json(value: unknown) {
  return html`<pre>${JSON.stringify(value, null, 2)}</pre>`;
}

/** Where the next page of a cursor-paged list is: the same query with `cursor` set. */
export function pager(basePath: string, query: Record<string, string | undefined>, nextCursor: string | null) {
  const first = hrefWith(basePath, { ...query, cursor: undefined });
  return html`<nav class="pager" aria-label="Pages">
    ${query.cursor ? html`<a href=${first} data-pager="first">First page</a>` : null}
    ${nextCursor ? html`<a href=${hrefWith(basePath, { ...query, cursor: nextCursor })} rel="next" data-pager="next">Next page</a>` : null}
  </nav>`;
}

/** A filter form's fields that were filled in: an empty field is no filter. */
export function filledFields(form: Record<string, string | undefined>): Record<string, string> {
  return Object.fromEntries(Object.entries(form).filter((e): e is [string, string] => e[1] !== undefined && e[1] !== ''));
}

export function hrefWith(basePath: string, query: Record<string, string | undefined>): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== '') params.set(k, v);
  const qs = params.toString();
  return qs ? `${basePath}?${qs}` : basePath;
}

export function connectionHref(providerConfigKey: string, connectionId: string, tail = ''): string {
  return `/console/connections/${encodeURIComponent(providerConfigKey)}/${encodeURIComponent(connectionId)}${tail}`;
}
