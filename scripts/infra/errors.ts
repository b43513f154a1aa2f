import { WeftError } from '../../common/errors';

/**
 * Stable codes for everything that can go wrong while obtaining or starting the embedded
 * servers. Callers (npm start, jest globalSetup, tests) branch on `code`, never on messages.
 */
export type InfraErrorCode =
  | 'infra_config_invalid'
  | 'infra_env_invalid'
  | 'infra_binary_unavailable'
  | 'infra_port_busy'
  | 'infra_state_dir_busy'
  | 'infra_process_failed'
  | 'infra_start_failed'
  | 'infra_start_timeout';

export class InfraError extends WeftError {
  constructor(
    override readonly code: InfraErrorCode,
    message: string,
    details?: unknown,
  ) {
    super(code, message, 500, details);
  }
}

/** Last `maxChars` characters of a process's output, for error messages. */
export function tail(text: string, maxChars = 4000): string {
  const trimmed = text.trimEnd();
  return trimmed.length <= maxChars ? trimmed : `...${trimmed.slice(-maxChars)}`;
}
