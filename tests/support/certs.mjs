// Throwaway TLS certificates for the local test and benchmark servers.
import { readFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync, execFileSync } from 'node:child_process';

/**
 * Self-signed certificates made with `openssl` in a temporary folder:
 * { dir, key, cert, otherKey, otherCert, cleanup() }; `cert` is for
 * localhost / 127.0.0.1, `otherCert` for other.test only.
 */
export function makeCerts() {
  const dir = mkdtempSync(join(tmpdir(), 'nethttp-tls-'));
  const mk = (name, cn, san) =>
    execFileSync(
      'openssl',
      ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', join(dir, `${name}.key`), '-out', join(dir, `${name}.pem`), '-days', '2', '-subj', `/CN=${cn}`, '-addext', `subjectAltName=${san}`],
      { stdio: 'ignore', timeout: 30000 },
    );
  mk('server', 'localhost', 'DNS:localhost,IP:127.0.0.1');
  mk('other', 'other.test', 'DNS:other.test');
  return {
    dir,
    key: readFileSync(join(dir, 'server.key')),
    cert: readFileSync(join(dir, 'server.pem')),
    certPath: join(dir, 'server.pem'),
    otherKey: readFileSync(join(dir, 'other.key')),
    otherCert: readFileSync(join(dir, 'other.pem')),
    otherCertPath: join(dir, 'other.pem'),
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}

export function haveOpenssl() {
  return spawnSync('openssl', ['version'], { timeout: 10000 }).status === 0;
}
