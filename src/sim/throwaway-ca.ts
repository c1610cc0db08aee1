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
  selfSignedCa(
    ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', f('ca.key')],
    f('ca.pem'),
    '/CN=telematics-agent throwaway test CA',
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
    signCsr(dir, name, 'ca', days, ext);
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

/** A self-signed CA certificate at `out`, valid 2 days; `keyArgs` make or name its key. */
function selfSignedCa(keyArgs: string[], out: string, subject: string): void {
  openssl(
    'req',
    '-x509',
    ...keyArgs,
    '-out',
    out,
    '-days',
    '2',
    '-sha256',
    '-subj',
    subject,
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  );
}

/** `dir/name.csr` signed by `dir/issuer.pem` and `.key` into `dir/name.pem`, valid `days`, with the extensions in `ext`. */
function signCsr(dir: string, name: string, issuer: string, days: number, ext: string): void {
  const f = (file: string): string => path.join(dir, file);
  openssl(
    'x509',
    '-req',
    '-in',
    f(`${name}.csr`),
    '-CA',
    f(`${issuer}.pem`),
    '-CAkey',
    f(`${issuer}.key`),
    '-CAcreateserial',
    '-out',
    f(`${name}.pem`),
    '-days',
    String(days),
    '-sha256',
    '-extfile',
    ext,
  );
}

/**
 * A chain of the size a public CA serves (bench:wire's real terms): an RSA-2048 root (the caFile,
 * never sent), a cross-signed RSA-2048 root and an RSA-2048 issuing intermediate, and an RSA-2048
 * leaf with a public certificate's extensions (key identifiers, AIA, CRL and policy URLs, and
 * a stand-in for the two SCTs of certificate transparency). `cert` is leaf + both intermediates:
 * about 3.8 KB of certificates in every full handshake, as on a load balancer with a public
 * certificate.
 */
export function makePublicLikeChain(dir: string): ThrowawayCa {
  const f = (name: string): string => path.join(dir, name);
  const rsa = (name: string): void => openssl('genrsa', '-out', f(`${name}.key`), '2048');
  for (const n of ['root', 'cross', 'issuing', 'leaf']) rsa(n);
  const caExt = (name: string, pathLen: number, issuerUrl: string): string => {
    const ext = f(`${name}.ext`);
    writeFileSync(
      ext,
      [
        `basicConstraints=critical,CA:TRUE,pathlen:${pathLen}`,
        'keyUsage=critical,digitalSignature,keyCertSign,cRLSign',
        'subjectKeyIdentifier=hash',
        'authorityKeyIdentifier=keyid:always',
        `authorityInfoAccess=OCSP;URI:http://ocsp.rootca1.example-trust.com,caIssuers;URI:${issuerUrl}`,
        'crlDistributionPoints=URI:http://crl.rootca1.example-trust.com/rootca1.crl',
        'certificatePolicies=2.23.140.1.2.1',
        'extendedKeyUsage=serverAuth,clientAuth',
        '',
      ].join('\n'),
    );
    return ext;
  };
  selfSignedCa(
    ['-new', '-key', f('root.key')],
    f('root.pem'),
    '/C=US/O=Example Trust Services/CN=Example Trust Services Root Certificate Authority - G2',
  );
  const sign = (name: string, subject: string, issuer: string, ext: string): void => {
    openssl('req', '-new', '-key', f(`${name}.key`), '-out', f(`${name}.csr`), '-subj', subject);
    signCsr(dir, name, issuer, 2, ext);
  };
  sign(
    'cross',
    '/C=US/O=Example Trust/CN=Example Trust Root CA 1',
    'root',
    caExt('cross', 1, 'http://crt.rootg2.example-trust.com/rootg2.cer'),
  );
  sign(
    'issuing',
    '/C=US/O=Example Trust/CN=Example Trust RSA 2048 M02',
    'cross',
    caExt('issuing', 0, 'http://crt.rootca1.example-trust.com/rootca1.cer'),
  );
  const leafExt = f('leaf.ext');
  // 1.3.6.1.4.1.11129.2.4.2: the embedded SCT list; two SCTs are about 240 bytes.
  const scts = `DER:0481F0${'00'.repeat(240)}`;
  writeFileSync(
    leafExt,
    [
      'subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:*.services.example-platform.com,DNS:services.example-platform.com',
      'basicConstraints=critical,CA:FALSE',
      'keyUsage=critical,digitalSignature,keyEncipherment',
      'extendedKeyUsage=serverAuth,clientAuth',
      'subjectKeyIdentifier=hash',
      'authorityKeyIdentifier=keyid:always',
      'authorityInfoAccess=OCSP;URI:http://ocsp.r2m02.example-trust.com,caIssuers;URI:http://crt.r2m02.example-trust.com/r2m02.cer',
      'crlDistributionPoints=URI:http://crl.r2m02.example-trust.com/r2m02.crl',
      'certificatePolicies=2.23.140.1.2.1',
      `1.3.6.1.4.1.11129.2.4.2=${scts}`,
      '',
    ].join('\n'),
  );
  sign('leaf', '/CN=*.services.example-platform.com', 'issuing', leafExt);
  const pem = (n: string): string => readFileSync(f(`${n}.pem`), 'utf8');
  return { caFile: f('root.pem'), key: readFileSync(f('leaf.key'), 'utf8'), cert: pem('leaf') + pem('issuing') + pem('cross') };
}
