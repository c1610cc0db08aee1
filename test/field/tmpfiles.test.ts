import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/paths.js';
import { tempDir } from '../helpers/tmp.js';
import { haveCommand } from './tools.js';

/**
 * systemd/telematics-agent.tmpfiles.conf, applied by the real systemd-tmpfiles to a copied tree
 * (--root, never the host): the configuration a --root install left root-owned gets the service
 * group once the target's sysusers has created it.
 */
const isRoot = process.getuid?.() === 0;

describe.skipIf(!isRoot || !haveCommand('systemd-tmpfiles'))('tmpfiles.d entry', () => {
  it('gives a copied configuration its owners at boot', () => {
    const root = tempDir('ta-tmpfiles-');
    mkdirSync(path.join(root, 'etc/tmpfiles.d'), { recursive: true });
    mkdirSync(path.join(root, 'etc/telematics-agent'), { mode: 0o755 });
    // What systemd-sysusers makes of the sysusers.d file on the target.
    writeFileSync(
      path.join(root, 'etc/passwd'),
      'root:x:0:0::/root:/bin/sh\ntelematics-agent:x:990:990::/var/lib/telematics-agent:/usr/sbin/nologin\n',
    );
    writeFileSync(path.join(root, 'etc/group'), 'root:x:0:\ntelematics-agent:x:990:\n');
    writeFileSync(path.join(root, 'etc/telematics-agent/config.json'), '{}', { mode: 0o644 });
    writeFileSync(path.join(root, 'etc/telematics-agent/password'), 'pw', { mode: 0o644 });
    const conf = path.join(root, 'etc/tmpfiles.d/telematics-agent.conf');
    copyFileSync(path.join(REPO_ROOT, 'systemd/telematics-agent.tmpfiles.conf'), conf);
    const r = spawnSync('systemd-tmpfiles', [`--root=${root}`, '--create', conf], { encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    const owner = (p: string) => {
      const s = statSync(path.join(root, p));
      return `${(s.mode & 0o777).toString(8)} ${s.uid}:${s.gid}`;
    };
    expect(owner('etc/telematics-agent')).toBe('750 0:990');
    expect(owner('etc/telematics-agent/config.json')).toBe('640 0:990');
    expect(owner('etc/telematics-agent/password')).toBe('600 0:0');
  });
});
