import { createPrivateKey, type KeyObject } from 'node:crypto';
import { SignJWT } from 'jose';
import { BadRequestError } from '../common/errors';

/**
 * The GitHub App's own identity: a short-lived RS256 JWT signed with the app's private
 * key, used only to mint installation tokens. GitHub rejects an `exp` more than ten
 * minutes ahead (clock skew included), so the token is backdated a minute and lives nine.
 */
export async function createAppJwt(appId: string, privateKey: KeyObject, now = Date.now()): Promise<string> {
  const iat = Math.floor(now / 1000) - 60;
  return new SignJWT({})
    .setProtectedHeader({ alg: 'RS256', typ: 'JWT' })
    .setIssuer(appId)
    .setIssuedAt(iat)
    .setExpirationTime(iat + 60 + 9 * 60)
    .sign(privateKey);
}

/**
 * A 4096-bit RSA key in PEM is about 3.3 KB; 16 KB leaves room for any key GitHub issues
 * while keeping a hostile body from reaching the parser at all.
 */
const APP_PRIVATE_KEY_MAX_LENGTH = 16 * 1024;

/**
 * Reads the app's private key. GitHub hands out PKCS#1 (`BEGIN RSA PRIVATE KEY`); PKCS#8
 * works too. Anything else is refused with a message that says what was expected.
 *
 * OpenSSL (through `createPrivateKey`) is the only parser: it reads the PEM in one linear
 * pass. A regular expression over the PEM markers used to run here first and backtracked
 * quadratically (minutes on a crafted 2 MB body, with the event loop blocked meanwhile).
 */
export function readAppPrivateKey(pem: string): KeyObject {
  if (pem.length > APP_PRIVATE_KEY_MAX_LENGTH) {
    throw new BadRequestError(
      'private_key_too_large',
      `The App private key is ${pem.length} characters long; a PEM key GitHub generates is about 1.7 KB (2048-bit) to 3.3 KB (4096-bit), at most ${APP_PRIVATE_KEY_MAX_LENGTH} is accepted.`,
    );
  }
  // Keys pasted into JSON by hand often carry literal "\n" sequences instead of line breaks.
  const text = pem.includes('\\n') && !pem.includes('\n') ? pem.replaceAll('\\n', '\n') : pem;
  let key: KeyObject;
  try {
    key = createPrivateKey({ key: text, format: 'pem' });
  } catch {
    throw new BadRequestError(
      'invalid_private_key',
      'The App private key must be the PEM block GitHub generated (-----BEGIN RSA PRIVATE KEY----- ... -----END RSA PRIVATE KEY-----); this one is not a readable private key.',
    );
  }
  if (key.asymmetricKeyType !== 'rsa') {
    throw new BadRequestError(
      'invalid_private_key',
      `The App private key must be an RSA key (GitHub Apps sign with RS256); this one is ${key.asymmetricKeyType ?? 'not an asymmetric key'}.`,
    );
  }
  return key;
}
