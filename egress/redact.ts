/** Secrets out of the addresses and texts of outbound calls before they are logged (provider calls, webhook deliveries). */

/** Query parameters that carry secrets in any provider we talk to. */
const SECRET_QUERY = /^(access_token|refresh_token|client_secret|code|token|api_key|apikey|key|sig|signature|tempauth)$/i;

export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    for (const key of [...u.searchParams.keys()]) if (SECRET_QUERY.test(key)) u.searchParams.set(key, 'REDACTED');
    u.username = '';
    u.password = '';
    return u.toString();
  } catch {
    return url.replace(/([?&](?:access_token|token|code|key|sig)=)[^&]*/gi, '$1REDACTED');
  }
}

/** Removes every occurrence of the given secret values from a string (error messages, bodies). */
export function scrubSecrets(text: string, secrets: string[]): string {
  let out = text;
  for (const s of secrets) if (s && s.length >= 6) out = out.split(s).join('REDACTED');
  return out;
}
