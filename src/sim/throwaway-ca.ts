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
  const server = issueServerCertificate(dir, 'server', 2);
  return { caFile: f('ca.pem'), ...server };
}

/**
 * Another server certificate for 127.0.0.1 / localhost from the CA made in `dir`, valid for `days`
 * from now; `days` -1 gives one that expired as it was made (notAfter a day before notBefore): TLS
 * then refuses it with CERT_HAS_EXPIRED, as it refuses a valid one judged by a clock years ahead.
 * With `startsInDays` > 0 it becomes valid only then (CERT_NOT_YET_VALID now, as a valid one is for
 * a clock at 1970); PlatformSimulator.setCertificate swaps it in a running simulator.
 */
export function issueServerCertificate(dir: string, name: string, days: number, startsInDays = 0): { key: string; cert: string } {
  const f = (file: string): string => path.join(dir, file);
  openssl(
    'req',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:P-256',
    '-nodes',
    '-keyout',
    f(`${name}.key`),
    '-out',
    f(`${name}.csr`),
    '-subj',
    '/CN=localhost',
  );
  const ext = f(`${name}.ext`);
  writeFileSync(ext, 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n');
  if (startsInDays === 0) {
    openssl(
      'x509',
      '-req',
      '-in',
      f(`${name}.csr`),
      '-CA',
      f('ca.pem'),
      '-CAkey',
      f('ca.key'),
      '-CAcreateserial',
      '-out',
      f(`${name}.pem`),
      '-days',
      String(days),
      '-extfile',
      ext,
    );
  } else {
    // `openssl x509` (3.0) cannot set notBefore; `openssl ca` can, with a throwaway database.
    const cnf = f(`${name}.ca.cnf`);
    writeFileSync(f(`${name}.index`), '');
    writeFileSync(f(`${name}.serial`), `${Date.now().toString(16).padStart(16, '0')}\n`);
    writeFileSync(
      cnf,
      `[ca]\ndefault_ca = d\n[d]\ndatabase = ${f(`${name}.index`)}\nnew_certs_dir = ${dir}\nserial = ${f(`${name}.serial`)}\ndefault_md = sha256\npolicy = p\nunique_subject = no\n[p]\ncommonName = supplied\n`,
    );
    const stamp = (ms: number): string => `${new Date(ms).toISOString().replace(/[-:T]/g, '').slice(0, 14)}Z`;
    const from = Date.now() + startsInDays * 86_400_000;
    openssl(
      'ca',
      '-batch',
      '-notext',
      '-config',
      cnf,
      '-cert',
      f('ca.pem'),
      '-keyfile',
      f('ca.key'),
      '-in',
      f(`${name}.csr`),
      '-out',
      f(`${name}.pem`),
      '-startdate',
      stamp(from),
      '-enddate',
      stamp(from + days * 86_400_000),
      '-extfile',
      ext,
    );
  }
  return { key: readFileSync(f(`${name}.key`), 'utf8'), cert: readFileSync(f(`${name}.pem`), 'utf8') };
}

function openssl(...args: string[]): void {
  execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'] });
}
