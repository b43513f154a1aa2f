import { createPublicKey, generateKeyPairSync } from 'node:crypto';
import { readAppPrivateKey } from '../../auth/github-app';
import { startWeftStack, type WeftStack } from '../support/weft-stack';

/**
 * The GitHub App private key used to be checked with a regular expression that backtracked
 * quadratically: a body of repeated BEGIN markers without an END took minutes (18.8 s at
 * 800 KB) with the event loop blocked for every environment. It is now parsed by OpenSSL
 * only, after a size cap.
 */
const crafted = (chars: number) => '-----BEGIN RSA PRIVATE KEY-----\n'.repeat(Math.ceil(chars / 32)).slice(0, chars);

describe('GitHub App private keys', () => {
  let stack: WeftStack;
  const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
  const pkcs1 = rsa.export({ type: 'pkcs1', format: 'pem' }) as string;
  const pkcs8 = rsa.export({ type: 'pkcs8', format: 'pem' }) as string;

  beforeAll(async () => {
    stack = await startWeftStack({ worker: false });
  });
  afterAll(async () => {
    await stack?.shutdown();
  });

  const register = (uniqueKey: string, privateKey: string) =>
    stack.api('POST', '/integrations', {
      body: {
        unique_key: uniqueKey,
        provider: 'github',
        credentials: { type: 'APP', app_id: '123', app_link: 'https://github.com/apps/weft-test', private_key: privateKey },
      },
    });

  // The old check took minutes on such keys: were it back, these tests would pass their
  // time limit (the suite's, 120 s) instead of answering.
  test('a crafted ~2 MB key is refused with 400 private_key_too_large, and the server keeps answering meanwhile', async () => {
    const key = crafted(1_900_000);
    const [res, health] = await Promise.all([
      register('crafted', key),
      (async () => {
        await new Promise((r) => setTimeout(r, 20));
        return (await fetch(`${stack.apiUrl}/health`)).status;
      })(),
    ]);
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('private_key_too_large');
    expect(health).toBe(200);
    expect((await stack.api('GET', '/integrations/crafted')).status).toBe(404);
  });

  test('a crafted key just under the cap is refused as unreadable', () => {
    expect(() => readAppPrivateKey(crafted(16 * 1024))).toThrow(expect.objectContaining({ code: 'invalid_private_key', status: 400 }));
  });

  test.each([
    ['PKCS#1 (what GitHub generates)', pkcs1],
    ['PKCS#8', pkcs8],
    ['PKCS#1 with literal \\n sequences (pasted into JSON by hand)', pkcs1.replace(/\n/g, '\\n')],
  ])('%s is accepted', async (_name, key) => {
    const res = await register(`ok-${Math.random().toString(36).slice(2, 8)}`, key);
    expect(res.status).toBe(201);
  });

  test.each([
    ['an EC key', generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' }) as string],
    ['the public key', createPublicKey(rsa).export({ type: 'spki', format: 'pem' }) as string],
    ['a passphrase-protected key', rsa.export({ type: 'pkcs8', format: 'pem', cipher: 'aes-256-cbc', passphrase: 'secret' }) as string],
    ['markers around garbage', '-----BEGIN RSA PRIVATE KEY-----\nnot base64 at all\n-----END RSA PRIVATE KEY-----\n'],
  ])('%s is refused with 400 invalid_private_key', async (_name, key) => {
    const res = await register('refused', key);
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('invalid_private_key');
  });
});
