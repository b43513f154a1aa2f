/** What the actionRun workflow carries: ids and the (small, validated) input. */
export interface ActionRunInput {
  environment: string;
  /** ConnectionDoc._id */
  connection: string;
  connectionId: string;
  providerConfigKey: string;
  provider: string;
  actionName: string;
  input: unknown;
  /** Extra attempts after a failure (the app's `X-Max-Retries`, 0–5). */
  maxRetries: number;
}

/** Failure types retrying cannot fix. */
export const NON_RETRYABLE_ACTION_ERRORS = [
  'invalid_action_input',
  'invalid_action_output',
  'unknown_connection',
  'unknown_provider_config',
  'unknown_action',
  'provider_auth_failed',
  'credentials_unreadable',
];
