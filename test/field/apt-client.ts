import { spawnSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/**
 * A gpg home of its own in a test's folder: keys made there never reach the user's keyring, and
 * its agent is stopped by `close`.
 */
export interface GpgHome {
  dir: string;
  gpg(args: string[], input?: string): { status: number | null; stdout: string; stderr: string };
  /** A new key without passphrase; returns its fingerprint. */
  generate(userId: string): string;
  close(): void;
}

export function gpgHome(dir: string): GpgHome {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const gpg: GpgHome['gpg'] = (args, input) => {
    const r = spawnSync('gpg', ['--homedir', dir, '--batch', ...args], { encoding: 'utf8', ...(input !== undefined ? { input } : {}) });
    return { status: r.status, stdout: r.stdout, stderr: r.stderr };
  };
  return {
    dir,
    gpg,
    generate(userId) {
      const made = gpg(['--passphrase', '', '--quick-gen-key', userId, 'default', 'default', 'never']);
      if (made.status !== 0) throw new Error(`gpg --quick-gen-key failed: ${made.stderr}`);
      const listed = gpg(['--with-colons', '--list-secret-keys', userId]).stdout;
      const fpr = /^fpr:(?:[^:]*:){8}([0-9A-F]{40}):/m.exec(listed)?.[1];
      if (!fpr) throw new Error(`no fingerprint for ${userId} in:\n${listed}`);
      return fpr;
    },
    close() {
      spawnSync('gpgconf', ['--homedir', dir, '--kill', 'all'], { stdio: 'ignore' });
    },
  };
}

/**
 * A gateway's apt as a client of one repository, in a tree of its own (APT_CONFIG points every
 * directory apt reads or writes into `dir`): no system source, list or status is read or changed,
 * and it needs no privileges.
 */
export interface AptClient {
  /** Replaces the only source: the deb822 entry a gateway would have in /etc/apt/sources.list.d/. */
  source(uri: string, signedByFile: string): void;
  /** Runs apt-get or apt-cache with this tree's configuration. */
  run(tool: 'apt-get' | 'apt-cache', args: string[], cwd?: string): { status: number | null; output: string };
}

export function aptClient(dir: string, arch: string): AptClient {
  const etc = path.join(dir, 'etc');
  for (const d of ['sources.list.d', 'apt.conf.d', 'preferences.d', 'trusted.gpg.d']) mkdirSync(path.join(etc, d), { recursive: true });
  const state = path.join(dir, 'state');
  const lists = path.join(state, 'lists');
  mkdirSync(path.join(dir, 'cache', 'archives', 'partial'), { recursive: true });
  writeFileSync(path.join(dir, 'status'), '');
  writeFileSync(path.join(etc, 'sources.list'), '');
  const config = path.join(dir, 'apt.conf');
  writeFileSync(
    config,
    [
      `Dir::Etc "${etc}";`,
      `Dir::Etc::main "/dev/null";`,
      `Dir::Etc::trusted "${path.join(etc, 'trusted.gpg')}";`,
      `Dir::State "${state}";`,
      `Dir::State::status "${path.join(dir, 'status')}";`,
      `Dir::Cache "${path.join(dir, 'cache')}";`,
      `APT::Architecture "${arch}";`,
      `APT::Architectures { "${arch}"; };`,
      // As root apt fetches as _apt, who may not read a test's folder; a gateway's repository is
      // fetched over HTTPS, where this makes no difference to what is verified.
      `APT::Sandbox::User "root";`,
      '',
    ].join('\n'),
  );
  return {
    source(uri, signedByFile) {
      // A fresh start for each source: nothing verified earlier stays in the lists.
      rmSync(lists, { recursive: true, force: true });
      mkdirSync(path.join(lists, 'partial'), { recursive: true });
      writeFileSync(
        path.join(etc, 'sources.list.d', 'fleet.sources'),
        `Types: deb\nURIs: ${uri}\nSuites: stable\nComponents: main\nSigned-By: ${signedByFile}\n`,
      );
    },
    run(tool, args, cwd) {
      const r = spawnSync(tool, args, {
        encoding: 'utf8',
        cwd: cwd ?? dir,
        env: { ...process.env, APT_CONFIG: config, LC_ALL: 'C' },
        timeout: 60_000,
      });
      return { status: r.status, output: `${r.stdout}${r.stderr}` };
    },
  };
}
