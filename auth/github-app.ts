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
  return new SignJWT({}).setProtectedHeader({ alg: 'RS256', typ: 'JWT' }).setIssuer(appId).setIssuedAt(iat).setExpirationTime(iat + 60 + 9 * 60).sign(privateKey);
}

/**
 * Reads the app's private key. GitHub hands out PKCS#1 (`BEGIN RSA PRIVATE KEY`); PKCS#8
 * works too. Anything else is refused with a message that says what was expected.
 */
export function readAppPrivateKey(pem: string): KeyObject {
  const text = pem.includes('\\n') && !pem.includes('\n') ? pem.replace(/\\n/g, '\n') : pem;
  if (!/-----BEGIN (RSA )?PRIVATE KEY-----[\s\S]+-----END (RSA )?PRIVATE KEY-----/.test(text)) {
    throw new BadRequestError('invalid_private_key', 'The App private key must be the PEM block GitHub generated (-----BEGIN RSA PRIVATE KEY----- ... -----END RSA PRIVATE KEY-----).');
  }
  try {
    const key = createPrivateKey(text);
    if (key.asymmetricKeyType !== 'rsa') throw new Error('not an RSA key');
    return key;
  } catch {
    throw new BadRequestError('invalid_private_key', 'The App private key is not a readable RSA private key.');
  }
}
