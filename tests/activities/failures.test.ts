import { ApplicationFailure } from '@temporalio/common';
import { AlreadyExistsError, CredentialsUnreadableError, InvalidValueError, NotFoundError, WeftError } from '../../common/errors';
import { EgressRefusedError, EgressTimeoutError } from '../../egress/errors';
import {
  ActionError,
  IntegrationCodeError,
  InvalidRecordError,
  ProviderAuthError,
  ProviderHttpError,
  ProviderUnreachableError,
  RateLimitedError,
} from '../../runtime/errors';
import { toActivityFailure, withActivityFailures } from '../../activities/failures';

/**
 * Whether a failed activity is retried is decided once, by the error's class (its
 * `retryable`); the workflows keep no lists of codes. These are the decisions the sync and
 * action workflows relied on when they still had those lists, plus the ones they never listed.
 */
describe('activity failures carry the retry decision of the error that caused them', () => {
  function failureOf(err: unknown): ApplicationFailure {
    const failure = toActivityFailure(err);
    expect(failure).toBeInstanceOf(ApplicationFailure);
    return failure as ApplicationFailure;
  }

  test.each([
    ['invalid_sync_record', new InvalidRecordError({ model: 'Event', validation: [{ path: 'id', message: 'Required', code: 'invalid_type' }] })],
    ['unknown_model', new IntegrationCodeError('unknown_model', 'Model "X" is not declared by this sync.')],
    ['pagination_not_configured', new IntegrationCodeError('pagination_not_configured', 'ctx.paginate needs a type.')],
    ['provider_auth_failed', new ProviderAuthError(401, 'rejected')],
    ['credentials_unreadable', new CredentialsUnreadableError('Stored credentials cannot be decrypted.')],
    ['unknown_connection', new NotFoundError('unknown_connection', 'Connection "c" no longer exists.')],
    ['invalid_action_input', new ActionError('invalid_action_input', 'Invalid input.', 400)],
    // A 500, and still final: the same action on the same input answers the same.
    ['invalid_action_output', new ActionError('invalid_action_output', 'Output does not match.', 500)],
    ['provider_http_error', new ProviderHttpError(404, { error: 'gone' }, {}, 'GET', 'https://api.example.com/x')],
    ['provider_unreachable', new ProviderUnreachableError('GET', 'https://api.example.com/x', 'ECONNRESET')],
    ['duplicate_connection', new AlreadyExistsError('duplicate_connection', 'exists')],
    ['invalid_cursor', new InvalidValueError('invalid_cursor', 'not ours')],
    [
      'egress_refused',
      new EgressRefusedError(
        { host: 'x', address: '10.0.0.1', port: 443, range: { rule: 'private', description: 'RFC 1918' }, allowVariable: 'WEFT_EGRESS_ALLOW_PROVIDERS' },
        424,
      ),
    ],
  ])('%s is final (nonRetryable), with its stable code as the failure type and its status for the API', (code, err) => {
    expect(err.retryable).toBe(false);
    const failure = failureOf(err);
    expect(failure).toMatchObject({ type: code, nonRetryable: true, message: err.message });
    expect(failure.details?.[0]).toMatchObject({ status: err.status });
  });

  test('a rate-limit wait is retried after the wait: a durable timer, not a sleep in the worker', () => {
    const failure = failureOf(new RateLimitedError(45_000, 'budget used up'));
    expect(failure).toMatchObject({ type: 'rate_limited', nonRetryable: false, nextRetryDelay: 45_000 });
    expect(failure.details?.[0]).toMatchObject({ status: 429 });
  });

  test.each([
    ['egress_timeout', new EgressTimeoutError('headers', 'api.example.com', 30_000)],
    ['refresh_lease_timeout', new WeftError('refresh_lease_timeout', 'Another process is refreshing.', 503)],
  ])('%s may pass: retried per the workflow policy', (code, err) => {
    expect(failureOf(err)).toMatchObject({ type: code, nonRetryable: false });
    expect(failureOf(err).nextRetryDelay).toBeUndefined();
  });

  test('the detail travels with the failure (the API answers an action with it)', () => {
    const err = new ProviderHttpError(409, { message: 'conflict' }, { 'x-request-id': 'r1' }, 'POST', 'https://api.example.com/x');
    expect(failureOf(err).details?.[0]).toEqual({
      status: 424,
      detail: { upstream: { status: 409, headers: { 'x-request-id': 'r1' }, body: { message: 'conflict' } } },
    });
  });

  test('errors that are not Weft errors, and failures made already, pass through unchanged', () => {
    const plain = new TypeError('x is undefined');
    expect(toActivityFailure(plain)).toBe(plain);
    const made = ApplicationFailure.nonRetryable('already decided', 'custom');
    expect(toActivityFailure(made)).toBe(made);
  });

  test('withActivityFailures reports what each activity throws through toActivityFailure and passes results on', async () => {
    const activities = withActivityFailures({
      async ok(n: number) {
        return n + 1;
      },
      async missing() {
        throw new NotFoundError('unknown_sync', 'no such sync');
      },
    });
    await expect(activities.ok(1)).resolves.toBe(2);
    await expect(activities.missing()).rejects.toMatchObject({ type: 'unknown_sync', nonRetryable: true, details: [{ status: 404 }] });
  });
});
