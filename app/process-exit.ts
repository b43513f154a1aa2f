import { WeftError } from '../common/errors';

/** How a standalone process reports a failure to start: the message and its stable code, no stack for known errors. */
export function describeFailure(err: unknown): string {
  if (err instanceof WeftError) return `${err.message} (${err.code})`;
  if (err instanceof Error) return err.stack ?? err.message;
  return String(err);
}
