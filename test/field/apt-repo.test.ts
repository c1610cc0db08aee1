import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/paths.js';
import { aptClient, gpgHome, type AptClient, type GpgHome } from './apt-client.js';
import { haveCommand } from './tools.js';

/**
 * `npm run repo` (scripts/apt-repo.sh): a signed apt repository made from a real package with a key
 * of a gpg home of the test's own, then read by apt as a gateway reads it (apt-client.ts): accepted
 * when Signed-By names its key, refused with apt's own words when Signed-By names another key or the
 * repository is not signed. The key's refusals (none, unknown, public part only) and a published
 * version whose content changed are refused before anything is written.
 * Needs apt-ftparchive (apt-utils), gpg and dpkg-deb (.ci/field-deps.sh installs them), and x64 Node
 * 20 (the package reuses the checkout's better-sqlite3 build); skips with a notice elsewhere.
 */
const missing = ['apt-ftparchive', 'gpg', 'gpgconf', 'dpkg-deb', 'apt-get'].filter((t) => !haveCommand(t));
const skip =
  missing.length > 0
    ? `${missing.join(', ')} not installed (.ci/field-deps.sh installs them)`
    : process.arch !== 'x64' || process.versions.modules !== '115'
      ? `the amd64 package reuses the checkout's build, which needs x64 Node 20 (this is ${process.arch}, ABI ${process.versions.modules})`
      : undefined;
if (skip) process.stderr.write(`skipping the apt repository tests: ${skip}\n`);

const SCRIPT = path.join(REPO_ROOT, 'scripts', 'apt-repo.sh');

function repo(args: string[], gnupgHome: string): { status: number | null; output: string; stdout: string } {
  const r = spawnSync('bash', [SCRIPT, ...args], { encoding: 'utf8', env: { ...process.env, GNUPGHOME: gnupgHome }, timeout: 60_000 });
  return { status: r.status, output: `${r.stdout}${r.stderr}`, stdout: r.stdout };
}

describe.skipIf(skip !== undefined)('a signed apt repository for the fleet (apt-ftparchive, gpg, apt as the client)', () => {
  let dir = '';
  let debs = '';
  let deb = '';
  let version = '';
  let signer: GpgHome;
  let other: GpgHome;
  let fpr = '';
  let otherFpr = '';
  let apt: AptClient;

  beforeAll(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'ta-apt-'));
    debs = path.join(dir, 'release');
    const build = spawnSync('bash', [path.join(REPO_ROOT, 'scripts/package-deb.sh'), '--arch', 'amd64', '--out', debs], {
      cwd: REPO_ROOT,
      encoding: 'utf8',
      env: { ...process.env, npm_config_offline: 'true', npm_config_update_notifier: 'false' },
      timeout: 170_000,
    });
    expect(build.status, `${build.stdout}${build.stderr}`).toBe(0);
    deb = build.stdout.trim().split('\n').pop() ?? '';
    version = spawnSync('dpkg-deb', ['-f', deb, 'Version'], { encoding: 'utf8' }).stdout.trim();
    signer = gpgHome(path.join(dir, 'gpg'));
    fpr = signer.generate('Fleet Archive <archive@fleet.example>');
    other = gpgHome(path.join(dir, 'gpg-other'));
    otherFpr = other.generate('Someone Else <else@elsewhere.example>');
    apt = aptClient(path.join(dir, 'client'), 'amd64');
  }, 240_000);

  afterAll(() => {
    signer?.close();
    other?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('refuses with a sentence when the key is missing, unknown to gpg, only its public part is here or it needs a passphrase, and writes nothing', () => {
    const out = path.join(dir, 'refused');
    const none = repo(['--from', debs, '--out', out], signer.dir);
    expect(none.status).toBe(1);
    expect(none.output).toMatch(/--key is required: the fingerprint of the gpg key that signs the repository/);

    const unknown = repo(['--key', otherFpr, '--from', debs, '--out', out], signer.dir);
    expect(unknown.status).toBe(1);
    expect(unknown.output).toContain(`gpg knows no key "${otherFpr}" (keyring ${signer.dir}): import the fleet's signing key`);

    // A home holding the signer's public key only, as any gateway or build machine without the secret.
    const publicOnly = gpgHome(path.join(dir, 'gpg-public'));
    try {
      const exported = signer.gpg(['--armor', '--export', fpr]).stdout;
      expect(publicOnly.gpg(['--import'], exported).status).toBe(0);
      const half = repo(['--key', fpr, '--from', debs, '--out', out], publicOnly.dir);
      expect(half.status).toBe(1);
      expect(half.output).toContain(`gpg has only the public part of key ${fpr}`);
      expect(half.output).toMatch(/signing needs its secret part/);
    } finally {
      publicOnly.close();
    }
    // A key that needs a passphrase: refused in --batch rather than waiting at a prompt.
    const locked = gpgHome(path.join(dir, 'gpg-locked'));
    try {
      const made = locked.gpg([
        '--pinentry-mode',
        'loopback',
        '--passphrase',
        'locked-Key-1',
        '--quick-gen-key',
        'Locked <l@fleet.example>',
      ]);
      expect(made.status, made.stderr).toBe(0);
      const r = repo(['--key', 'l@fleet.example', '--from', debs, '--out', out], locked.dir);
      expect(r.status).toBe(1);
      expect(r.output).toMatch(/gpg could not sign with key [0-9A-F]{40} \(a passphrase\? unlock it in gpg-agent first/);
    } finally {
      locked.close();
    }
    expect(existsSync(out)).toBe(false);
  });

  it('makes dists/, pool/, Packages, Release, InRelease and Release.gpg, and writes the public key only', () => {
    const out = path.join(dir, 'repo');
    const started = process.hrtime.bigint();
    const made = repo(['--key', fpr, '--from', debs, '--out', out], signer.dir);
    process.stdout.write(`apt repository made from one package in ${Number(process.hrtime.bigint() - started) / 1e9} s\n`);
    expect(made.status, made.output).toBe(0);
    expect(made.stdout.trim()).toBe(out);
    for (const f of [
      'dists/stable/Release',
      'dists/stable/InRelease',
      'dists/stable/Release.gpg',
      'dists/stable/main/binary-amd64/Packages',
      'dists/stable/main/binary-amd64/Packages.xz',
      `pool/main/t/telematics-agent/telematics-agent_${version}_amd64.deb`,
      'fleet-archive-key.asc',
    ])
      expect(existsSync(path.join(out, f)), f).toBe(true);
    const release = readFileSync(path.join(out, 'dists/stable/Release'), 'utf8');
    expect(release).toMatch(/^Origin: telematics-agent$/m);
    expect(release).toMatch(/^Suite: stable$/m);
    expect(release).toMatch(/^Architectures: amd64$/m);
    expect(release).toMatch(/^ [0-9a-f]{64} +\d+ main\/binary-amd64\/Packages$/m);
    // The signatures are the signer's, checked by gpg with its public key.
    const verify = signer.gpg(['--status-fd', '1', '--verify', path.join(out, 'dists/stable/InRelease')]);
    expect(verify.stdout).toMatch(new RegExp(`VALIDSIG ${fpr} `));
    // What is written for the gateways holds the public key, and nothing secret.
    const packets = signer.gpg(['--list-packets', path.join(out, 'fleet-archive-key.asc')]).stdout;
    expect(packets).toMatch(/:public key packet:/);
    expect(packets).not.toMatch(/secret (sub)?key packet/);
    const grep = spawnSync('grep', ['-rl', 'PRIVATE KEY BLOCK', out], { encoding: 'utf8' });
    expect(grep.stdout).toBe('');
  });

  it('is accepted by apt when Signed-By names its key: update, the candidate, and the package fetched as published', () => {
    const out = path.join(dir, 'repo');
    apt.source(`file:${out}`, path.join(out, 'fleet-archive-key.asc'));
    const update = apt.run('apt-get', ['update']);
    expect(update.status, update.output).toBe(0);
    expect(update.output).not.toMatch(/^(W|E):/m);
    expect(apt.run('apt-cache', ['policy', 'telematics-agent']).output).toMatch(
      new RegExp(`Candidate: ${version.replace(/[.+~]/g, '\\$&')}\\n`),
    );
    // The fields unattended-upgrades' Origins-Pattern matches ("origin=telematics-agent,codename=stable"), as apt reads them.
    expect(apt.run('apt-cache', ['policy']).output).toMatch(
      /release o=telematics-agent,a=stable,n=stable,l=telematics-agent,c=main,b=amd64/,
    );
    const fetched = path.join(dir, 'fetched');
    mkdirSync(fetched);
    const download = apt.run('apt-get', ['download', 'telematics-agent'], fetched);
    expect(download.status, download.output).toBe(0);
    expect(readFileSync(path.join(fetched, path.basename(deb))).equals(readFileSync(deb))).toBe(true);
  });

  it('is refused by apt when Signed-By names another key, and when it is not signed (apt says so)', () => {
    const out = path.join(dir, 'repo');
    const otherKey = path.join(dir, 'other.asc');
    writeFileSync(otherKey, other.gpg(['--armor', '--export', otherFpr]).stdout);
    apt.source(`file:${out}`, otherKey);
    const wrong = apt.run('apt-get', ['update']);
    process.stdout.write(`apt, Signed-By another key:\n${wrong.output}\n`);
    expect(wrong.status).toBe(100);
    expect(wrong.output).toContain(`NO_PUBKEY ${fpr.slice(-16)}`);
    expect(wrong.output).toMatch(/E: The repository 'file:\S+ stable InRelease' is not signed\./);
    expect(apt.run('apt-cache', ['policy', 'telematics-agent']).output).not.toMatch(/Candidate: \d/);

    const unsigned = path.join(dir, 'unsigned');
    spawnSync('cp', ['-a', out, unsigned]);
    rmSync(path.join(unsigned, 'dists/stable/InRelease'));
    rmSync(path.join(unsigned, 'dists/stable/Release.gpg'));
    apt.source(`file:${unsigned}`, path.join(out, 'fleet-archive-key.asc'));
    const bare = apt.run('apt-get', ['update']);
    process.stdout.write(`apt, no signature:\n${bare.output}\n`);
    expect(bare.status).toBe(100);
    expect(bare.output).toMatch(/E: The repository 'file:\S+ stable Release' is not signed\./);
    expect(apt.run('apt-cache', ['policy', 'telematics-agent']).output).not.toMatch(/Candidate: \d/);
  });

  it('keeps the versions published before beside a newer one, which apt then offers, and refuses to change a published one', () => {
    const out = path.join(dir, 'repo');
    // The same package as the next version (only its version differs), as a release would bring.
    const tree = path.join(dir, 'next-tree');
    expect(spawnSync('dpkg-deb', ['-R', deb, tree]).status).toBe(0);
    const control = path.join(tree, 'DEBIAN/control');
    writeFileSync(control, readFileSync(control, 'utf8').replace(/^Version: .*$/m, `Version: ${version}+next1`));
    const next = path.join(dir, 'next');
    mkdirSync(next);
    const built = spawnSync(
      'dpkg-deb',
      ['--root-owner-group', '-Zgzip', '--build', tree, path.join(next, `telematics-agent_${version}+next1_amd64.deb`)],
      {
        encoding: 'utf8',
      },
    );
    expect(built.status, built.stderr).toBe(0);
    const made = repo(['--key', fpr, '--from', next, '--out', out], signer.dir);
    expect(made.status, made.output).toBe(0);
    apt.source(`file:${out}`, path.join(out, 'fleet-archive-key.asc'));
    expect(apt.run('apt-get', ['update']).status).toBe(0);
    const policy = apt.run('apt-cache', ['policy', 'telematics-agent']).output;
    expect(policy).toContain(`Candidate: ${version}+next1`);
    expect(policy).toMatch(new RegExp(`^ +${version.replace(/[.+~]/g, '\\$&')} 500$`, 'm'));

    // The first version again, with other content under its published name.
    const changed = path.join(dir, 'changed');
    mkdirSync(changed);
    copyFileSync(path.join(next, `telematics-agent_${version}+next1_amd64.deb`), path.join(changed, path.basename(deb)));
    const refused = repo(['--key', fpr, '--from', changed, '--out', out], signer.dir);
    expect(refused.status).toBe(1);
    expect(refused.output).toContain('is already published with other content: a published version never changes');
  });
});
