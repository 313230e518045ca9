import { createPrivateKey, X509Certificate } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { run } from './commands.js';

/**
 * The fake internet's TLS certificate: made once with the openssl CLI and kept, because making an RSA
 * key costs a noticeable fraction of a second. One self-signed certificate answers every name (SNI is
 * accepted whatever it says); a client that verifies certificates refuses it, as it would refuse an
 * interception proxy.
 */
export interface TlsMaterial {
  key: string;
  cert: string;
}

export function defaultCertificateDir(): string {
  return join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'nestbox', 'fake-internet');
}

const STILL_VALID_FOR_MS = 30 * 24 * 3600 * 1000;

export async function fakeTlsMaterial(dir = defaultCertificateDir()): Promise<TlsMaterial> {
  const keyPath = join(dir, 'key.pem');
  const certPath = join(dir, 'cert.pem');
  const cached = readUsable(keyPath, certPath);
  if (cached) return cached;
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  // Written under temporary names and renamed, so concurrent starts never read half a file.
  const suffix = `.${process.pid}.${Date.now()}`;
  await run('openssl', [
    'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-sha256', '-days', '3650',
    '-subj', '/C=US/O=Example Hosting/CN=www.example.com',
    '-addext', 'subjectAltName=DNS:www.example.com,DNS:example.com,DNS:localhost',
    '-keyout', keyPath + suffix, '-out', certPath + suffix,
  ]);
  const made = { key: readFileSync(keyPath + suffix, 'utf8'), cert: readFileSync(certPath + suffix, 'utf8') };
  renameSync(keyPath + suffix, keyPath);
  renameSync(certPath + suffix, certPath);
  return made;
}

function readUsable(keyPath: string, certPath: string): TlsMaterial | null {
  try {
    const material = { key: readFileSync(keyPath, 'utf8'), cert: readFileSync(certPath, 'utf8') };
    const certificate = new X509Certificate(material.cert);
    if (Date.parse(certificate.validTo) - Date.now() < STILL_VALID_FOR_MS) return null;
    // Two processes making the pair at once could leave one's key beside the other's certificate.
    return certificate.checkPrivateKey(createPrivateKey(material.key)) ? material : null;
  } catch {
    return null;
  }
}
