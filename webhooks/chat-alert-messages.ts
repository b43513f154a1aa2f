/**
 * Chat alert bodies: what a Slack incoming webhook (and the Slack-compatible ones of
 * Mattermost, Rocket.Chat, Discord's `/slack` endpoint) accepts — `text` for notifications
 * and clients without blocks, `blocks` (Block Kit) for the message itself.
 */
export interface ChatMessage {
  text: string;
  blocks: Block[];
}

type TextObject = { type: 'plain_text' | 'mrkdwn'; text: string };
type Block =
  | { type: 'header'; text: TextObject }
  | { type: 'section'; text?: TextObject; fields?: TextObject[] }
  | { type: 'context'; elements: TextObject[] }
  | { type: 'actions'; elements: Array<{ type: 'button'; text: TextObject; url: string }> };

/** Whose failure the alert is about. */
export interface AlertSubject {
  environment: string;
  connectionId: string;
  providerConfigKey: string;
  provider: string;
  /** Null for the connection's own (a refused token refresh). */
  sync: { name: string; variant: string } | null;
}

export interface FailureAlert {
  /** `reauthorize`: the provider refused the connection's credentials; the end user must connect again. */
  kind: 'sync_failed' | 'reauthorize';
  code: string;
  message: string;
  at: Date;
  /** The failed run's page in the Temporal UI, when a run failed. */
  runUrl: string | null;
  /** Failures of this code counted since the previous alert of it (not alerted one by one), and when that alert was. */
  sincePrevious: { count: number; at: Date } | null;
  /** Failed runs (every code) since the episode began, this one included. */
  failures: number;
  since: Date;
}

export interface ResolvedAlert {
  at: Date;
  /** Failed runs since the episode began, by code. */
  failures: Record<string, number>;
  since: Date;
  /** The succeeding run's page in the Temporal UI. */
  runUrl: string | null;
}

/** Longest error message shown: enough to act on, far below Block Kit's 3,000 characters a section. */
const MAX_MESSAGE_CHARS = 600;
const MAX_HEADER_CHARS = 150;

export function failureMessage(subject: AlertSubject, alert: FailureAlert): ChatMessage {
  const title = alert.kind === 'reauthorize' ? 'Connection needs re-authorization' : 'Sync failed';
  const what = subject.sync
    ? `${alert.kind === 'reauthorize' ? 'sync' : 'Sync'} ${syncLabel(subject.sync)} of ${subject.providerConfigKey} connection ${subject.connectionId}`
    : `${subject.providerConfigKey} connection ${subject.connectionId}`;
  const message = safeText(alert.message);
  const summary =
    alert.kind === 'reauthorize'
      ? subject.sync
        ? `${subject.providerConfigKey} connection ${subject.connectionId} needs re-authorization: ${what} failed (${alert.code})`
        : `${what} needs re-authorization (${alert.code})`
      : `${what} failed (${alert.code})`;
  const again = alert.sincePrevious
    ? ` ${plural(alert.sincePrevious.count, 'more failure')} since the last alert (${iso(alert.sincePrevious.at)}); ${plural(alert.failures, 'failed run')} since ${iso(alert.since)}.`
    : '';
  const blocks: Block[] = [
    { type: 'header', text: plain(`${title}: ${subject.sync ? syncLabel(subject.sync) : subject.connectionId}`.slice(0, MAX_HEADER_CHARS)) },
    { type: 'section', text: mrkdwn(`${escape(summary)}.${escape(again)}`) },
    { type: 'section', fields: subjectFields(subject, alert.code) },
    { type: 'section', text: mrkdwn(`*Error*\n${message ? `\`\`\`${escape(message)}\`\`\`` : '_no message_'}`) },
    { type: 'context', elements: [mrkdwn(escape(`Environment ${subject.environment} · ${iso(alert.at)}`))] },
  ];
  if (alert.runUrl) blocks.push({ type: 'actions', elements: [{ type: 'button', text: plain('Open the run in Temporal UI'), url: alert.runUrl }] });
  return { text: `[${subject.environment}] ${summary}: ${message}${again}`, blocks };
}

export function resolvedMessage(subject: AlertSubject, alert: ResolvedAlert): ChatMessage {
  const total = Object.values(alert.failures).reduce((n, c) => n + c, 0);
  const codes = Object.entries(alert.failures)
    .map(([code, n]) => `${code} × ${n}`)
    .join(', ');
  const what = subject.sync
    ? `sync ${syncLabel(subject.sync)} of ${subject.providerConfigKey} connection ${subject.connectionId}`
    : `${subject.providerConfigKey} connection ${subject.connectionId}`;
  const summary = `Resolved: ${what} succeeded again after ${plural(total, 'failed run')} since ${iso(alert.since)}`;
  const blocks: Block[] = [
    { type: 'header', text: plain(`Resolved: ${subject.sync ? syncLabel(subject.sync) : subject.connectionId}`.slice(0, MAX_HEADER_CHARS)) },
    { type: 'section', text: mrkdwn(`${escape(summary)}.`) },
    { type: 'section', fields: [...subjectFields(subject, null), mrkdwn(`*Failures*\n${escape(codes || 'none')}`)] },
    { type: 'context', elements: [mrkdwn(escape(`Environment ${subject.environment} · ${iso(alert.at)}`))] },
  ];
  if (alert.runUrl) blocks.push({ type: 'actions', elements: [{ type: 'button', text: plain('Open the run in Temporal UI'), url: alert.runUrl }] });
  return { text: `[${subject.environment}] ${summary} (${codes}).`, blocks };
}

/** A run's page in the Temporal UI. */
export function temporalRunUrl(uiUrl: string, namespace: string, workflowId: string, runId: string): string {
  return `${uiUrl.replace(/\/+$/, '')}/namespaces/${encodeURIComponent(namespace)}/workflows/${encodeURIComponent(workflowId)}/${encodeURIComponent(runId)}/history`;
}

function subjectFields(subject: AlertSubject, code: string | null): TextObject[] {
  const fields = [
    mrkdwn(`*Integration*\n${escape(subject.providerConfigKey)} (${escape(subject.provider)})`),
    mrkdwn(`*Connection*\n${escape(subject.connectionId)}`),
  ];
  if (subject.sync) fields.push(mrkdwn(`*Sync*\n${escape(syncLabel(subject.sync))}`));
  if (code) fields.push(mrkdwn(`*Error code*\n\`${escape(code)}\``));
  return fields;
}

function syncLabel(sync: { name: string; variant: string }): string {
  return sync.variant && sync.variant !== 'base' ? `${sync.name} (variant ${sync.variant})` : sync.name;
}

const URL_IN_TEXT = /\bhttps?:\/\/[^\s"'<>`]+/gi;

/**
 * The error message as a chat channel may see it: run errors are scrubbed of the
 * credentials Weft knows already; URLs also lose their user info, query and fragment (a
 * provider's signed or token-carrying link), and the length is bounded.
 */
function safeText(message: string): string {
  const withoutQueries = message.replace(URL_IN_TEXT, (raw) => {
    try {
      const u = new URL(raw);
      return `${u.protocol}//${u.host}${u.pathname}`;
    } catch {
      return '[link]';
    }
  });
  return withoutQueries.length > MAX_MESSAGE_CHARS ? `${withoutQueries.slice(0, MAX_MESSAGE_CHARS - 1)}…` : withoutQueries;
}

/** Slack's three control characters in mrkdwn. */
function escape(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function plain(text: string): TextObject {
  return { type: 'plain_text', text };
}

function mrkdwn(text: string): TextObject {
  return { type: 'mrkdwn', text };
}

function plural(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}

function iso(at: Date): string {
  return at.toISOString().replace(/\.\d{3}Z$/, 'Z');
}
