import { WeftError } from '../common/errors';
import type { EgressRefusal } from './address-policy';

/**
 * The egress policy refused a destination. At registration (a literal address in a URL)
 * the status is 400; at call time (a name that resolved there) 424, as the request that
 * was refused is Weft's own call to a third party. The code is `egress_refused` either way.
 */
export class EgressRefusedError extends WeftError {
  constructor(
    readonly refusal: EgressRefusal,
    status: 400 | 424,
    what?: string,
  ) {
    const named = refusal.host === refusal.address ? refusal.address : `${refusal.host} (${refusal.address})`;
    const subject = what ? `${what}: ` : '';
    const hostPort = refusal.address.includes(':') ? `[${refusal.address}]:${refusal.port}` : `${refusal.address}:${refusal.port}`;
    const howToAllow =
      refusal.range.rule === 'metadata'
        ? `add exactly ${hostPort} to ${refusal.allowVariable} (a range does not allow it)`
        : `add ${hostPort} (or a CIDR) to ${refusal.allowVariable}`;
    super(
      'egress_refused',
      `${subject}egress to ${named} port ${refusal.port} refused by the "${refusal.range.rule}" rule (${refusal.range.description}); ` +
        `Weft calls only public addresses unless allowed. To allow this one, ${howToAllow}.`,
      status,
      { egress: { host: refusal.host, address: refusal.address, port: refusal.port, rule: refusal.range.rule, allow_variable: refusal.allowVariable } },
    );
  }
}

/**
 * A call that would carry credentials (a provider API key, a bearer token, an OAuth client
 * secret) over plain http to a server the operator has not named. Refused before anything
 * is sent: 424 like any refusal of Weft's own call, not retried (the URL will not change).
 */
export class CredentialsOverHttpError extends WeftError {
  constructor(url: URL, allowVariable: string, what?: string) {
    const hostPort = `${url.hostname}:${url.port || 80}`;
    super(
      'credentials_over_http_refused',
      `${what ? `${what}: ` : ''}credentials are sent only over https; ${url.protocol}//${url.host} is plain http. ` +
        `Use https, or, for a server you run yourself on a network you trust, name exactly ${hostPort} in ${allowVariable}.`,
      424,
      { egress: { host: url.hostname, port: Number(url.port || 80), allow_variable: allowVariable } },
    );
  }
}

/** The destination took longer than the configured egress timeout for one phase of the call. */
export class EgressTimeoutError extends WeftError {
  constructor(
    readonly phase: 'connect' | 'headers' | 'body',
    host: string,
    timeoutMs: number,
  ) {
    super('egress_timeout', `${host} did not ${PHASE_TEXT[phase]} within ${timeoutMs} ms (${SETTING[phase]}).`, 504);
  }
}

const PHASE_TEXT = { connect: 'accept the connection', headers: 'answer', body: 'send its whole response' } as const;
const SETTING = { connect: 'WEFT_EGRESS_CONNECT_TIMEOUT_MS', headers: 'WEFT_EGRESS_HEADERS_TIMEOUT_MS', body: 'WEFT_EGRESS_BODY_TIMEOUT_MS' } as const;
