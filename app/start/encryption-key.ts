import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { CredentialCipher } from '../../auth/credential-cipher';
import type { Config } from '../../common/config';
import { StartError } from './errors';

export interface ResolvedEncryptionKey {
  key: string;
  source: 'env' | 'file' | 'generated';
  /** The key file, when the key came from (or went into) the state directory. */
  file?: string;
}

const KEY_FILE = 'encryption-key';

/**
 * The key that encrypts stored credentials. WEFT_ENCRYPTION_KEY wins. Outside production a
 * missing key is generated once into `<state dir>/encryption-key` (mode 0600) and reused, so
 * credentials stored by one `npm start` still open on the next. Production never guesses:
 * losing the key means losing every stored credential, so it must be configured on purpose.
 */
export async function resolveEncryptionKey(config: Config, stateDir: string): Promise<ResolvedEncryptionKey> {
  if (config.WEFT_ENCRYPTION_KEY) return { key: validated(config.WEFT_ENCRYPTION_KEY, 'WEFT_ENCRYPTION_KEY'), source: 'env' };
  if (config.NODE_ENV === 'production') {
    throw new StartError(
      'start_missing_encryption_key',
      'WEFT_ENCRYPTION_KEY is not set. In production Weft does not generate one: set it to 32 random bytes in base64 ' +
        "(e.g. `node -e \"console.log(require('crypto').randomBytes(32).toString('base64'))\"`) and keep it safe; " +
        'stored credentials cannot be decrypted without it.',
    );
  }
  const file = path.join(stateDir, KEY_FILE);
  const existing = await readFile(file, 'utf8').catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return undefined;
    throw err;
  });
  if (existing !== undefined) return { key: validated(existing.trim(), file), source: 'file', file };

  await mkdir(stateDir, { recursive: true });
  const key = CredentialCipher.generateKey();
  try {
    // wx: if another start wrote it a moment ago, theirs wins and is read below.
    await writeFile(file, `${key}\n`, { mode: 0o600, flag: 'wx' });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    return { key: validated((await readFile(file, 'utf8')).trim(), file), source: 'file', file };
  }
  await chmod(file, 0o600); // in case the umask narrowed nothing but a filesystem widened it
  return { key, source: 'generated', file };
}

function validated(key: string, where: string): string {
  try {
    new CredentialCipher(key);
  } catch {
    throw new StartError('start_invalid_encryption_key', `The encryption key in ${where} is not one or more comma-separated base64 values of 32 bytes each.`);
  }
  return key;
}
