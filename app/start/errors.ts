import { WeftError } from '../../common/errors';

export type StartErrorCode = 'start_port_busy' | 'start_missing_encryption_key' | 'start_invalid_encryption_key' | 'start_invalid_option';

/** Start-up problems the operator can fix; printed as their message alone, without a stack. */
export class StartError extends WeftError {
  constructor(
    override readonly code: StartErrorCode,
    message: string,
  ) {
    super(code, message, 500);
  }
}
