/**
 * A throwaway public-key infrastructure for TLS tests: a CA of the test's own, a server
 * certificate for 127.0.0.1/localhost signed by it, client certificates signed by it, and a
 * client certificate from a second, unrelated CA (the one a server requiring client
 * certificates must refuse). Written as PEM files into a directory the test owns.
 *
 * ECDSA P-256 keys through WebCrypto (fast to generate, accepted by Go's and Node's TLS);
 * @peculiar/x509 builds the certificates (its dependency injection needs reflect-metadata).
 */
import 'reflect-metadata';
import { webcrypto } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import * as x509 from '@peculiar/x509';

type CryptoKeyPair = webcrypto.CryptoKeyPair;

x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);

const ALGORITHM = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
const DAY_MS = 86_400_000;

/** A certificate and its key as PEM, and the files they were written to. */
export interface PemPair {
  cert: string;
  key: string;
  certPath: string;
  keyPath: string;
}

export interface TestPki {
  dir: string;
  /** The CA every certificate below (except `foreignClient`) is signed by. */
  ca: PemPair;
  /** For the server: SAN 127.0.0.1, ::1 and localhost, server-auth usage. */
  server: PemPair;
  /** A client certificate the CA signed (client-auth usage). */
  client: PemPair;
  /** A client certificate signed by another CA: a server that checks client certificates must refuse it. */
  foreignClient: PemPair;
  /** The other CA (to build a server that trusts only it, say). */
  foreignCa: PemPair;
}

interface Issued {
  cert: x509.X509Certificate;
  keys: CryptoKeyPair;
}

let serial = 1;
function nextSerial(): string {
  serial += 1;
  return serial.toString(16).padStart(2, '0');
}

async function newKeys(): Promise<CryptoKeyPair> {
  return (await webcrypto.subtle.generateKey(ALGORITHM, true, ['sign', 'verify'])) as CryptoKeyPair;
}

async function createCa(name: string): Promise<Issued> {
  const keys = await newKeys();
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: nextSerial(),
    name: `CN=${name}`,
    notBefore: new Date(Date.now() - DAY_MS),
    notAfter: new Date(Date.now() + 30 * DAY_MS),
    keys,
    signingAlgorithm: ALGORITHM,
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return { cert, keys };
}

async function issue(ca: Issued, name: string, usage: 'server' | 'client'): Promise<Issued> {
  const keys = await newKeys();
  const extensions: x509.Extension[] = [
    new x509.BasicConstraintsExtension(false, undefined, true),
    new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment, true),
    new x509.ExtendedKeyUsageExtension([usage === 'server' ? x509.ExtendedKeyUsage.serverAuth : x509.ExtendedKeyUsage.clientAuth]),
    await x509.AuthorityKeyIdentifierExtension.create(ca.cert),
  ];
  if (usage === 'server') {
    extensions.push(
      new x509.SubjectAlternativeNameExtension([
        { type: 'dns', value: 'localhost' },
        { type: 'ip', value: '127.0.0.1' },
        { type: 'ip', value: '::1' },
      ]),
    );
  }
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: nextSerial(),
    subject: `CN=${name}`,
    issuer: ca.cert.subject,
    notBefore: new Date(Date.now() - DAY_MS),
    notAfter: new Date(Date.now() + 30 * DAY_MS),
    publicKey: keys.publicKey,
    signingKey: ca.keys.privateKey,
    signingAlgorithm: ALGORITHM,
    extensions,
  });
  return { cert, keys };
}

async function privateKeyPem(keys: CryptoKeyPair): Promise<string> {
  const pkcs8 = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', keys.privateKey));
  const lines = pkcs8.toString('base64').match(/.{1,64}/g) ?? [];
  return `-----BEGIN PRIVATE KEY-----\n${lines.join('\n')}\n-----END PRIVATE KEY-----\n`;
}

async function writePair(dir: string, name: string, issued: Issued): Promise<PemPair> {
  const cert = issued.cert.toString('pem') + '\n';
  const key = await privateKeyPem(issued.keys);
  const certPath = path.join(dir, `${name}.crt`);
  const keyPath = path.join(dir, `${name}.key`);
  await writeFile(certPath, cert);
  await writeFile(keyPath, key, { mode: 0o600 });
  return { cert, key, certPath, keyPath };
}

/** Creates the CA, server and client certificates in `dir` (created if missing). */
export async function createTestPki(dir: string): Promise<TestPki> {
  await mkdir(dir, { recursive: true });
  const ca = await createCa('Weft Test CA');
  const foreignCa = await createCa('Unrelated Test CA');
  return {
    dir,
    ca: await writePair(dir, 'ca', ca),
    server: await writePair(dir, 'server', await issue(ca, 'localhost', 'server')),
    client: await writePair(dir, 'client', await issue(ca, 'weft-client', 'client')),
    foreignClient: await writePair(dir, 'foreign-client', await issue(foreignCa, 'weft-client', 'client')),
    foreignCa: await writePair(dir, 'foreign-ca', foreignCa),
  };
}
