import { REDACTED, secretHint } from './hint';
import { isSecretQueryParam } from './names';

export interface UrlRedactionOptions {
  /**
   * Secret query values become `REDACTED-<hint>` instead of `REDACTED` (saved mocks: links that
   * differ only in a secret must stay apart; see hint.ts).
   */
  hint?: boolean;
  /** A URL Weft itself serves: the OAuth flow's `state` is secret too (names.ts). */
  inbound?: boolean;
}

/**
 * Webhook URLs whose path is the credential: whoever holds the URL can post. Each rule names
 * the host and how many leading path segments are not secret; the rest become REDACTED.
 */
interface PathSecretRule {
  host: RegExp;
  /** Path segments kept (the rest redacted), given the segments; null when the path is not a webhook's. */
  kept(segments: string[]): number | null;
}

const PATH_SECRET_RULES: PathSecretRule[] = [
  // Slack: /services/T…/B…/<secret>, /workflows/T…/A…/<id>/<secret>, /triggers/T…/<id>/<secret>.
  { host: /^hooks\.slack(-gov)?\.com$/i, kept: (s) => (s.length > 3 ? 3 : null) },
  // Discord: /api[/v10]/webhooks/<id>/<token>.
  {
    host: /^((ptb|canary)\.)?discord(app)?\.com$/i,
    kept: (s) => {
      const at = s.findIndex((x, i) => x.toLowerCase() === 'webhooks' && i <= 2);
      return at >= 0 && s.length > at + 2 ? at + 2 : null;
    },
  },
  // Microsoft Teams / Office 365 connectors: …/IncomingWebhook/<secret>/<guid>.
  {
    host: /(^|\.)webhook\.office\.com$|^outlook\.office(365)?\.com$/i,
    kept: (s) => {
      const at = s.findIndex((x) => x.toLowerCase() === 'incomingwebhook');
      return at >= 0 && s.length > at + 1 ? at + 1 : null;
    },
  },
];

/** `/hooks/<long random key>` of any host (Mattermost, Rocket.Chat and the like). */
const GENERIC_HOOK_KEY = /^[A-Za-z0-9_-]{20,}$/;

/**
 * A URL (absolute, or a path with its query as a server sees it) with every secret replaced:
 * userinfo removed, secret query and fragment parameters' values, the secret path of a known
 * webhook host. Everything else stays byte for byte as it was, so a redacted link in a
 * saved response still names the same resource.
 */
export function redactUrl(url: string, opts: UrlRedactionOptions = {}): string {
  const m = /^([a-z][a-z0-9+.-]*:\/\/)([^/?#]*)([^?#]*)(.*)$/i.exec(url);
  if (!m) return redactParams(url, opts);
  const [, scheme, authority, path, rest] = m;
  const at = authority.lastIndexOf('@');
  const host = (at >= 0 ? authority.slice(at + 1) : authority).replace(/:\d+$/, '');
  return `${scheme}${host}${authority.slice(at + 1 + host.length)}${redactPath(host, path)}${redactParams(rest, opts)}`;
}

/** Every URL in a text (an error message, a log line, a string field) redacted by redactUrl. */
export function redactUrlsInText(text: string, opts: UrlRedactionOptions = {}): string {
  if (!text.includes('://')) return text;
  // A backslash ends a URL too: in JSON text held in a string (`\"https://…\"`) it escapes the quote that follows.
  return text.replace(/[a-z][a-z0-9+.-]*:\/\/[^\s"'<>`\\]+/gi, (url) => redactUrl(url, opts));
}

function redactPath(host: string, path: string): string {
  const segments = path.split('/').slice(1);
  const rule = PATH_SECRET_RULES.find((r) => r.host.test(host));
  if (rule) {
    const kept = rule.kept(segments);
    if (kept !== null) return `/${[...segments.slice(0, kept), ...segments.slice(kept).map((s) => (s ? REDACTED : s))].join('/')}`;
  }
  if (/^api\.telegram\.org$/i.test(host)) return path.replace(/^\/(file\/)?bot[^/]+/i, `/$1bot${REDACTED}`);
  const hooks = segments.findIndex((s, i) => s.toLowerCase() === 'hooks' && GENERIC_HOOK_KEY.test(segments[i + 1] ?? ''));
  if (hooks >= 0) return `/${segments.map((s, i) => (i === hooks + 1 ? REDACTED : s)).join('/')}`;
  return path;
}

/** The `?query#fragment` part (or a bare path with one): secret parameters' values replaced. */
function redactParams(text: string, opts: UrlRedactionOptions): string {
  return text.replace(/([?&#])([^=&#?]+)=([^&#]*)/g, (whole, sep: string, name: string, value: string) => {
    if (value === '' || !isSecretQueryParam(safeDecode(name), opts)) return whole;
    return `${sep}${name}=${opts.hint ? secretHint(safeDecode(value.replace(/\+/g, ' '))) : REDACTED}`;
  });
}

export function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
