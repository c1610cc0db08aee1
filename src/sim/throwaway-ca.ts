/**
 * A throwaway CA and a server certificate for 127.0.0.1 / localhost signed by it, made with
 * openssl in a directory of the caller's (tests and bench/wire.ts run the simulator behind TLS
 * with it). Nothing here is ever committed: the keys live as long as the temporary directory. The
 * agent then trusts the CA through platform.caFile, with verification on, as it would a private
 * staging CA.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export interface ThrowawayCa {
  /** The CA certificate (PEM file): platform.caFile. */
  caFile: string;
  /** The server's key and certificate (PEM text) for PlatformSimulator.start({ tls }). */
  key: string;
  cert: string;
}

export function makeThrowawayCa(dir: string): ThrowawayCa {
  const f = (name: string): string => path.join(dir, name);
  const openssl = (...args: string[]): void => {
    execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'] });
  };
  // P-256 keys: the certificate chain is then about the size a public ECDSA chain has (smaller than RSA).
  openssl(
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:P-256',
    '-nodes',
    '-keyout',
    f('ca.key'),
    '-out',
    f('ca.pem'),
    '-days',
    '2',
    '-subj',
    '/CN=telematics-agent throwaway test CA',
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  );
  openssl(
    'req',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:P-256',
    '-nodes',
    '-keyout',
    f('server.key'),
    '-out',
    f('server.csr'),
    '-subj',
    '/CN=localhost',
  );
  const ext = f('server.ext');
  writeFileSync(ext, 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n');
  openssl(
    'x509',
    '-req',
    '-in',
    f('server.csr'),
    '-CA',
    f('ca.pem'),
    '-CAkey',
    f('ca.key'),
    '-CAcreateserial',
    '-out',
    f('server.pem'),
    '-days',
    '2',
    '-extfile',
    ext,
  );
  return { caFile: f('ca.pem'), key: readFileSync(f('server.key'), 'utf8'), cert: readFileSync(f('server.pem'), 'utf8') };
}
