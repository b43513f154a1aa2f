import { randomBytes } from 'node:crypto';
import { sealedAt, type CredentialCipher } from '../auth/credential-cipher';
import { NotFoundError, WeftError } from '../common/errors';
import type { EnvironmentDoc, EnvironmentStore } from '../store/environments';

/** After a rotation, webhooks carry a signature under the previous key for this long. */
export const SIGNING_KEY_GRACE_MS = 24 * 60 * 60 * 1000;

/** Standard Webhooks secrets: `whsec_` + base64 of the raw HMAC key (24 random bytes). */
function generateWebhookSigningKey(): string {
  return `whsec_${randomBytes(24).toString('base64')}`;
}

function signingKeyHint(key: string): string {
  return key.slice(-4);
}

/** The keys to sign with now: the current one first, the previous one during the grace period. */
export interface SigningKeys {
  current: string;
  previous: string | null;
}

/** An environment's first key being stored, per environment (see webhookSigningKeys). */
const firstKeyCreations = new Map<string, Promise<string | null>>();

/** Reads the environment's signing keys, creating the first key on first use. */
export async function webhookSigningKeys(
  environments: EnvironmentStore,
  cipher: CredentialCipher,
  env: EnvironmentDoc,
  now = new Date(),
): Promise<SigningKeys> {
  let sealed = env.webhook_signing_key_encrypted;
  if (!sealed) {
    // One creation per environment in this process: the dispatcher delivers the environment's
    // first events at once, and FerretDB can let two conditional updates both write, so each
    // caller would sign with its own key while only the last one stays stored.
    let creating = firstKeyCreations.get(env._id);
    if (!creating) {
      const key = generateWebhookSigningKey();
      creating = environments
        .setSigningKeyIfAbsent(env._id, cipher.seal(key, sealedAt.webhookSigningKey(env._id)), signingKeyHint(key))
        .finally(() => firstKeyCreations.delete(env._id));
      firstKeyCreations.set(env._id, creating);
    }
    sealed = await creating;
    if (!sealed) throw new NotFoundError('unknown_environment', `Environment "${env._id}" does not exist.`);
  }
  const inGrace = env.webhook_signing_key_rotated_at !== null && now.getTime() - env.webhook_signing_key_rotated_at.getTime() < SIGNING_KEY_GRACE_MS;
  const previous =
    inGrace && env.previous_webhook_signing_key_encrypted
      ? cipher.open<string>(env.previous_webhook_signing_key_encrypted, sealedAt.webhookSigningKey(env._id))
      : null;
  return { current: cipher.open<string>(sealed, sealedAt.webhookSigningKey(env._id)), previous };
}

/**
 * Makes a new signing key and returns it in plaintext (the only time it is shown). The
 * replaced key stays valid for signatures during the grace period.
 */
export async function rotateWebhookSigningKey(
  environments: EnvironmentStore,
  cipher: CredentialCipher,
  environment: string,
  now = new Date(),
): Promise<{ key: string; previousValidUntil: Date | null }> {
  // Compare-and-set against the key we read; a concurrent rotation makes us read again.
  for (let attempt = 0; attempt < 5; attempt += 1) {
    const env = await environments.get(environment);
    if (!env) throw new NotFoundError('unknown_environment', `Environment "${environment}" does not exist.`);
    const key = generateWebhookSigningKey();
    const current = env.webhook_signing_key_encrypted;
    if (await environments.replaceSigningKey(environment, current, cipher.seal(key, sealedAt.webhookSigningKey(environment)), signingKeyHint(key), now)) {
      return { key, previousValidUntil: current ? new Date(now.getTime() + SIGNING_KEY_GRACE_MS) : null };
    }
  }
  throw new WeftError('signing_key_rotation_conflict', 'The webhook signing key was rotated concurrently; try again.', 409);
}
