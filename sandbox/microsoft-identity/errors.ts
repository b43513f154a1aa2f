/**
 * AADSTS errors. One error value serves three places: the token
 * endpoint's JSON body, an error redirect to the client, and an HTML error page, so the
 * catalogue below is the single place the wording lives. Clients must branch on `error` and
 * `error_codes`, never on the text; the text still follows Microsoft's so logs read alike.
 */

const ERROR_URI = 'https://login.microsoftonline.com/error?code=';

export class AadError extends Error {
  constructor(
    /** The AADSTS number, e.g. 70011. */
    readonly code: number,
    /** The OAuth `error` value, e.g. `invalid_scope`. */
    readonly error: string,
    /** The text after `AADSTSnnnn: `. */
    readonly detail: string,
    readonly extra: {
      /** `suberror` on the token endpoint (e.g. `consent_required` with AADSTS65001). */
      suberror?: string;
      /** `error_subcode` on redirects (`cancel` when the user backed out). */
      subcode?: string;
    } = {},
  ) {
    super(`AADSTS${code}: ${detail}`);
  }

  /** 401 for a client that failed to authenticate, 400 for everything else. */
  get status(): number {
    return this.error === 'invalid_client' ? 401 : 400;
  }
}

export interface TraceIds {
  traceId: string;
  correlationId: string;
  /** Request time, epoch ms. */
  now: number;
}

/** `2016-01-09 02:02:12Z`: the format of `timestamp` and of the description's last line. */
export function aadTimestamp(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().slice(0, 19).replace('T', ' ') + 'Z';
}

/** `AADSTSnnnn: ...\r\nTrace ID: ...\r\nCorrelation ID: ...\r\nTimestamp: ...` */
export function errorDescription(e: AadError, ids: TraceIds): string {
  return `${e.message}\r\nTrace ID: ${ids.traceId}\r\nCorrelation ID: ${ids.correlationId}\r\nTimestamp: ${aadTimestamp(ids.now)}`;
}

function errorUri(code: number): string {
  return ERROR_URI + code;
}

/** The token endpoint's error body, fields in the order Microsoft sends them. */
export function errorJson(e: AadError, ids: TraceIds): Record<string, unknown> {
  const body: Record<string, unknown> = {
    error: e.error,
    error_description: errorDescription(e, ids),
    error_codes: [e.code],
    timestamp: aadTimestamp(ids.now),
    trace_id: ids.traceId,
    correlation_id: ids.correlationId,
    error_uri: errorUri(e.code),
  };
  if (e.extra.suberror) body.suberror = e.extra.suberror;
  return body;
}

/** Query (or fragment / form_post) parameters of an error redirect, before `state`. */
export function errorRedirectParams(e: AadError, ids: TraceIds): Array<[string, string]> {
  const params: Array<[string, string]> = [['error', e.error]];
  if (e.extra.subcode) params.push(['error_subcode', e.extra.subcode]);
  params.push(['error_description', errorDescription(e, ids)], ['error_uri', errorUri(e.code)]);
  return params;
}

// ---------------------------------------------------------------------------------------
// Catalogue
// ---------------------------------------------------------------------------------------

export const AAD = {
  tenantNotFound: (tenant: string) =>
    new AadError(
      90002,
      'invalid_request',
      `Tenant '${tenant}' not found. Check to make sure you have the correct tenant ID and are signing into the correct cloud. Check with your subscription administrator, this may happen if there are no active subscriptions for the tenant.`,
    ),
  tenantMalformed: (tenant: string) =>
    new AadError(900023, 'invalid_request', `Specified tenant identifier '${tenant}' is neither a valid DNS name, nor a valid external domain.`),
  missingParameter: (name: string) => new AadError(900144, 'invalid_request', `The request body must contain the following parameter: '${name}'.`),
  malformed: () => new AadError(9002313, 'invalid_request', 'Invalid request. Request is malformed or invalid.'),
  postOnly: (method: string) => new AadError(900561, 'invalid_request', `The endpoint only accepts POST, OPTIONS requests. Received a ${method} request.`),
  appNotFound: (clientId: string, tenantName: string) =>
    new AadError(
      700016,
      'unauthorized_client',
      `Application with identifier '${clientId}' was not found in the directory '${tenantName}'. This can happen if the application has not been installed by the administrator of the tenant or consented to by any user in the tenant. You may have sent your authentication request to the wrong tenant.`,
    ),
  redirectMismatch: (redirectUri: string, clientId: string) =>
    new AadError(
      50011,
      'invalid_request',
      `The redirect URI '${redirectUri}' specified in the request does not match the redirect URIs configured for the application '${clientId}'. Make sure the redirect URI sent in the request matches one added to your application in the Azure portal. Navigate to https://aka.ms/redirectUriMismatchError to learn more about how to fix this.`,
    ),
  invalidSecret: (clientId: string) =>
    new AadError(
      7000215,
      'invalid_client',
      `Invalid client secret provided. Ensure the secret being sent in the request is the client secret value, not the client secret ID, for a secret added to app '${clientId}'.`,
    ),
  missingSecret: () => new AadError(7000218, 'invalid_client', "The request body must contain the following parameter: 'client_assertion' or 'client_secret'."),
  secretExpired: (clientId: string) =>
    new AadError(
      7000222,
      'invalid_client',
      `The provided client secret keys for app '${clientId}' are expired. Visit the Azure portal to create new keys for your app: https://aka.ms/NewClientSecret, or consider using certificate credentials for added security: https://aka.ms/certCreds.`,
    ),
  publicClientSecret: () => new AadError(700025, 'invalid_client', "Client is public so neither 'client_assertion' nor 'client_secret' should be presented."),
  unsupportedGrantType: (grantType: string) => new AadError(70003, 'unsupported_grant_type', `The app requested an unsupported grant type '${grantType}'.`),
  responseTypeToken: () => new AadError(700051, 'unsupported_response_type', "response_type 'token' is not enabled for the application."),
  responseTypeIdToken: () => new AadError(700054, 'unsupported_response_type', "response_type 'id_token' is not enabled for the application."),
  staticScopeLimit: (scope: string) =>
    new AadError(
      70011,
      'invalid_scope',
      `The provided value for the input parameter 'scope' is not valid. The scope ${scope} is not valid. static scope limit exceeded.`,
    ),
  multipleResources: (scope: string) =>
    new AadError(
      700022,
      'invalid_scope',
      `The provided value for the input parameter scope is not valid because it contains more than one resource. Scope ${scope} is not valid.`,
    ),
  emptyScopeOnCode: () =>
    new AadError(
      28003,
      'invalid_scope',
      'Provided value for the input parameter scope cannot be empty when requesting an access token using the provided authorization code. Please specify a valid scope.',
    ),
  resourceNotFound: (resource: string, tenantName: string) =>
    new AadError(
      500011,
      'invalid_resource',
      `The resource principal named ${resource} was not found in the tenant named ${tenantName}. This can happen if the application has not been installed by the administrator of the tenant or consented to by any user in the tenant. You might have sent your authentication request to the wrong tenant.`,
    ),
  consentRequired: (clientId: string, appName: string, error: 'invalid_grant' | 'interaction_required' = 'invalid_grant') =>
    new AadError(
      65001,
      error,
      `The user or administrator has not consented to use the application with ID '${clientId}' named '${appName}'. Send an interactive authorization request for this user and resource.`,
      error === 'invalid_grant' ? { suberror: 'consent_required' } : {},
    ),
  userDeclined: () => new AadError(65004, 'access_denied', 'User declined to consent to access the app.', { subcode: 'cancel' }),
  adminApprovalRequired: () => new AadError(90094, 'access_denied', 'The grant requires admin permission.', { subcode: 'cancel' }),
  noSession: () =>
    new AadError(
      50058,
      'login_required',
      "A silent sign-in request was sent but no user is signed in. The cookies used to represent the user's session were not sent in the request to Azure AD.",
    ),
  challengeSize: () => new AadError(501491, 'invalid_request', 'Invalid size of Code_Challenge parameter.'),
  invalidGrant: () => new AadError(70000, 'invalid_grant', 'Provided grant is invalid or malformed.'),
  codeRedeemed: () =>
    new AadError(
      54005,
      'invalid_grant',
      'OAuth2 Authorization code was already redeemed, please retry with a new valid code or use an existing refresh token.',
    ),
  expiredGrant: () =>
    new AadError(
      70008,
      'invalid_grant',
      'The provided authorization code or refresh token has expired due to inactivity. Send a new interactive authorization request for this user and resource.',
    ),
  replyAddressMismatch: (given: string, expected: string) =>
    new AadError(
      500112,
      'invalid_grant',
      `The reply address '${given}' does not match the reply address '${expected}' provided when requesting Authorization code.`,
    ),
  pkceMismatch: () => new AadError(501481, 'invalid_grant', 'The Code_Verifier does not match the code_challenge supplied in the authorization request.'),
  refreshMalformed: () => new AadError(9002313, 'invalid_grant', 'Invalid request. Request is malformed or invalid.'),
  revoked: (issuedAt: string, validFrom: string) =>
    new AadError(
      50173,
      'invalid_grant',
      `The provided grant has expired due to it being revoked, a fresh auth token is needed. The user might have changed or reset their password. The grant was issued on '${issuedAt}' and the TokensValidFrom date (before which tokens are not valid) for this user is '${validFrom}'.`,
    ),
} as const;

/** The error body of a `failNext()` injection with this status. */
export function injectedError(status: number): AadError {
  if (status === 401) return AAD.invalidSecret('(injected)');
  if (status === 429) {
    return new AadError(90055, 'temporarily_unavailable', 'There are a significant number of incoming requests. Please try again later.');
  }
  if (status === 503 || status === 504) return new AadError(90033, 'temporarily_unavailable', 'A transient error has occurred. Please try again.');
  if (status >= 500) return new AadError(90033, 'server_error', 'A transient error has occurred. Please try again.');
  return AAD.malformed();
}
