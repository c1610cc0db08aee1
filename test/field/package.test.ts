import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  readSync,
  closeSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/paths.js';
import { tempDir } from '../helpers/tmp.js';
import { haveCommand } from './tools.js';
import { DEVICE_URL, provision } from './provision-run.js';

/**
 * The amd64 package as `npm run package -- --arch amd64` builds it (from dist/, the locked
 * production dependencies, and the checkout's own better-sqlite3 build: no compile), unpacked and
 * read: what it holds, what it leaves out, every ELF's architecture, its maintainer scripts'
 * refusal of a node of another ABI; and provision.sh refusing a package or a checkout of another
 * architecture for an image. The arm64 and armhf packages are proven under emulation by
 * scripts/prove-arch.sh (too slow for every run: README, "Gateways").
 */
const skip = !haveCommand('dpkg-deb')
  ? 'dpkg-deb is not installed'
  : process.arch !== 'x64' || process.versions.modules !== '115'
    ? `the amd64 package reuses the checkout's build, which needs x64 Node 20 (this is ${process.arch}, ABI ${process.versions.modules})`
    : undefined;
if (skip) process.stderr.write(`skipping the package tests: ${skip}\n`);

/** The CLI entry as package.json names it, wherever the build puts it. */
const MAIN =
  Object.values((JSON.parse(readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { bin: Record<string, string> }).bin)[0] ?? '';

/** Debian architecture from an ELF header (class, machine, ARM float ABI), or undefined. */
function elfArch(file: string): string | undefined {
  const h = Buffer.alloc(40);
  const fd = openSync(file, 'r');
  const n = readSync(fd, h, 0, 40, 0);
  closeSync(fd);
  if (n < 40 || h.readUInt32BE(0) !== 0x7f454c46) return undefined;
  const machine = h.readUInt16LE(18);
  if (machine === 0x3e) return 'amd64';
  if (machine === 0xb7) return 'arm64';
  if (machine === 0x28) return h.readUInt32LE(36) & 0x400 ? 'armhf' : 'armel';
  return `machine ${machine}`;
}

function* walk(dir: string): Generator<string> {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) yield* walk(p);
    else if (e.isFile()) yield p;
  }
}

describe.skipIf(skip !== undefined)('the Debian package (amd64)', () => {
  let work: string;
  let deb: string;
  let tree: string;
  let build: { status: number | null; out: string };

  beforeAll(() => {
    work = mkdtempSync(path.join(os.tmpdir(), 'ta-package-'));
    const r = spawnSync('bash', [path.join(REPO_ROOT, 'scripts/package-deb.sh'), '--arch', 'amd64', '--out', work], {
      cwd: REPO_ROOT,
      encoding: 'utf8',
      env: { ...process.env, npm_config_offline: 'true', npm_config_update_notifier: 'false' },
      timeout: 170_000,
    });
    build = { status: r.status, out: `${r.stdout}${r.stderr}` };
    deb = r.stdout.trim().split('\n').pop() ?? '';
    tree = path.join(work, 'tree');
    if (r.status === 0) spawnSync('dpkg-deb', ['-R', deb, tree]);
  }, 180_000);

  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it('is written where it says, named by version and architecture', () => {
    expect(build.status, build.out).toBe(0);
    const version = (JSON.parse(readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }).version;
    expect(deb).toBe(path.join(work, `telematics-agent_${version}_amd64.deb`));
    const field = (f: string): string => spawnSync('dpkg-deb', ['-f', deb, f], { encoding: 'utf8' }).stdout.trim();
    expect(field('Architecture')).toBe('amd64');
    expect(field('Version')).toBe(version);
    expect(field('Depends')).toContain('nodejs (>= 20.19)');
    // ignition.gpio runs Debian's gpiod tools (libgpiod v2); without a GPIO ignition nothing needs them.
    expect(field('Recommends')).toBe('gpiod (>= 2)');
  });

  it('holds what the gateway runs: program, production dependencies, unit, sysusers, tmpfiles, example config', () => {
    for (const f of [
      path.join('opt/telematics-agent', MAIN),
      'opt/telematics-agent/node_modules/better-sqlite3/build/Release/better_sqlite3.node',
      'opt/telematics-agent/node_modules/@serialport/bindings-cpp/prebuilds/linux-x64/@serialport+bindings-cpp.glibc.node',
      'opt/telematics-agent/scripts/provision.sh',
      'usr/lib/systemd/system/telematics-agent.service',
      'usr/lib/sysusers.d/telematics-agent.conf',
      'usr/lib/tmpfiles.d/telematics-agent.conf',
      'usr/bin/telematics-agent',
      'etc/telematics-agent/config.example.json',
    ])
      expect(readdirSync(path.join(tree, path.dirname(f))), f).toContain(path.basename(f));
    expect(readFileSync(path.join(tree, 'DEBIAN/conffiles'), 'utf8').trim()).toBe('/etc/telematics-agent/config.example.json');
    expect(readFileSync(path.join(tree, 'opt/telematics-agent/node-abi'), 'utf8').trim()).toBe('115');
    // The command runs Debian's node, the one the package depends on and its native modules match.
    expect(readFileSync(path.join(tree, 'usr/bin/telematics-agent'), 'utf8')).toContain(
      `exec /usr/bin/node ${path.posix.join('/opt/telematics-agent', MAIN)} "$@"`,
    );
  });

  it('leaves out the development side: no devDependencies, sources, tests or native sources', () => {
    const modules = readdirSync(path.join(tree, 'opt/telematics-agent/node_modules'));
    for (const dev of ['vitest', 'typescript', 'prettier', 'ajv', 'yaml', 'nmea-simple']) expect(modules).not.toContain(dev);
    const app = readdirSync(path.join(tree, 'opt/telematics-agent'));
    for (const f of ['src', 'test', 'bench', 'tsconfig.json']) expect(app).not.toContain(f);
    expect(readdirSync(path.join(tree, 'opt/telematics-agent/node_modules/better-sqlite3'))).not.toContain('deps');
    expect(readdirSync(path.join(tree, 'opt/telematics-agent/node_modules/@serialport/bindings-cpp/prebuilds'))).toEqual(['linux-x64']);
  });

  it('leaves out what the gateway never loads: tests, TypeScript, docs, source maps, build-only packages', () => {
    const app = path.join(tree, 'opt/telematics-agent');
    const files = [...walk(app)].map((f) => path.relative(app, f));
    const found = (re: RegExp) => files.filter((f) => re.test(f)).slice(0, 5);
    expect(found(/(^|\/)(test|tests|__tests__|\.github|examples?|benchmarks?|docs?)\//)).toEqual([]);
    expect(found(/\.(ts|mts|cts|map)$/)).toEqual([]);
    expect(found(/^node_modules\/.*\.(md|markdown|h|gypi?|c|cc|cpp)$/)).toEqual([]);
    const modules = readdirSync(path.join(app, 'node_modules'));
    for (const buildOnly of ['prebuild-install', 'node-addon-api', 'tar-fs', 'node-abi']) expect(modules).not.toContain(buildOnly);
    for (const kept of [
      'better-sqlite3',
      'serialport',
      'zod',
      'pino',
      'undici',
      'commander',
      'systeminformation',
      'bindings',
      'node-gyp-build',
    ])
      expect(modules).toContain(kept);
    // 2,136 files before the pruning (20.0 MiB installed), 928 after (10.9 MiB): room for growth, not for a test tree.
    expect(files.length).toBeLessThan(1200);
  });

  it('loads from its pruned tree every module the daemon and CLI import, the lazy ones too', () => {
    // From dist/, as the program resolves them: serialport at the first port open, zod by createRequire.
    const probe = path.join(tree, 'opt/telematics-agent/dist/package-probe.cjs');
    writeFileSync(
      probe,
      `const Database = require('better-sqlite3');
const db = new Database(':memory:');
const sqlite = db.prepare('select sqlite_version() as v').get().v;
db.close();
const { SerialPort } = require('serialport');
const binding = require('@serialport/bindings-cpp').autoDetect();
const { z } = require('zod');
z.object({ a: z.number() }).parse({ a: 1 });
require('pino')({ enabled: false });
require('commander');
require('systeminformation');
require('undici/lib/dispatcher/client.js');
require('undici/lib/dispatcher/pool.js');
console.log(JSON.stringify({ sqlite, serialPort: typeof SerialPort, binding: typeof binding.list }));
`,
    );
    const r = spawnSync(process.execPath, [probe], { encoding: 'utf8' });
    rmSync(probe);
    expect(r.status, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ serialPort: 'function', binding: 'function' });
  });

  it('has every ELF file of its architecture', () => {
    const elves = [...walk(tree)].map((f) => [path.relative(tree, f), elfArch(f)] as const).filter(([, a]) => a !== undefined);
    expect(elves.length).toBeGreaterThanOrEqual(2);
    for (const [f, arch] of elves) expect(arch, f).toBe('amd64');
  });

  it('runs its CLI from the unpacked tree with this node', () => {
    const r = spawnSync(process.execPath, [path.join(tree, 'opt/telematics-agent', MAIN), '--version'], { encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
  });

  it('refuses at install a node of another ABI, with what to do', () => {
    const dir = tempDir('ta-package-abi-');
    const fakeNode = path.join(dir, 'node');
    writeFileSync(fakeNode, '#!/bin/sh\ncase "$*" in *modules*) echo 127 ;; *) echo v22.12.0 ;; esac\n');
    chmodSync(fakeNode, 0o755);
    for (const script of ['preinst', 'postinst']) {
      const text = readFileSync(path.join(tree, 'DEBIAN', script), 'utf8');
      expect(text).toContain('WANT_ABI=115');
      const copy = path.join(dir, script);
      writeFileSync(copy, text.replaceAll('/usr/bin/node', fakeNode));
      const r = spawnSync('sh', [copy, script === 'preinst' ? 'install' : 'configure'], { encoding: 'utf8' });
      expect(r.status, script).toBe(1);
      expect(r.stderr).toContain('v22.12.0 (Node ABI 127)');
      expect(r.stderr).toContain("Install Debian's nodejs");
      expect(r.stderr).not.toContain('NODE_MODULE_VERSION');
    }
  });

  it('stops the service before an upgrade unpacks (prerm and preinst) and starts it again when the upgrade aborts', () => {
    // The scripts as packaged, with systemd's presence, the configuration and deb-systemd-invoke
    // pointed at a temporary directory; the real dpkg and systemd run them in package-upgrade.test.ts.
    const dir = tempDir('ta-package-scripts-');
    const systemdDir = path.join(dir, 'run-systemd-system');
    const config = path.join(dir, 'config.json');
    const calls = path.join(dir, 'calls');
    mkdirSync(systemdDir);
    writeFileSync(config, '{}');
    writeFileSync(path.join(dir, 'deb-systemd-invoke'), `#!/bin/sh\necho "$*" >>${calls}\n`, { mode: 0o755 });
    const run = (script: string, ...args: string[]): string => {
      const copy = path.join(dir, script);
      const text = readFileSync(path.join(tree, 'DEBIAN', script), 'utf8')
        .replaceAll('/run/systemd/system', systemdDir)
        .replaceAll('/etc/telematics-agent/config.json', config);
      writeFileSync(copy, text);
      rmSync(calls, { force: true });
      const r = spawnSync('sh', [copy, ...args], { encoding: 'utf8', env: { ...process.env, PATH: `${dir}:${process.env.PATH ?? ''}` } });
      expect(r.status, `${script} ${args.join(' ')}: ${r.stderr}`).toBe(0);
      return existsSync(calls) ? readFileSync(calls, 'utf8').trim() : '';
    };
    expect(run('prerm', 'upgrade', '0.2.0')).toBe('stop telematics-agent.service');
    expect(run('prerm', 'remove')).toBe('stop telematics-agent.service');
    // The prerm that runs on upgrade is the old package's, which may not stop: preinst does too.
    expect(run('preinst', 'upgrade', '0.1.0')).toBe('stop telematics-agent.service');
    expect(run('preinst', 'install')).toBe('');
    expect(run('postinst', 'abort-upgrade', '0.2.0')).toBe('start telematics-agent.service');
    expect(run('postrm', 'abort-upgrade', '0.1.0')).toBe('start telematics-agent.service');
    // Not configured: nothing to start.
    rmSync(config);
    expect(run('postinst', 'abort-upgrade', '0.2.0')).toBe('');
  });

  it('provision.sh refuses to put it into an image of another architecture', () => {
    const root = tempDir('ta-provision-arch-');
    const r = provision(root, ['--package', deb, '--arch', 'arm64', '--username', 'u', '--password-file', '-'], { input: 'pw\n' });
    expect(r.status, r.out).toBe(2);
    expect(r.out).toContain('is for amd64, but');
    expect(r.out).toContain('is arm64');
    expect(readdirSync(root)).toEqual([]);
  });
});

describe('provision.sh --root from a checkout', () => {
  it("refuses an image of another architecture: its native modules are this machine's", () => {
    const root = tempDir('ta-provision-foreign-');
    const r = provision(root, [
      '--arch',
      process.arch === 'arm64' ? 'amd64' : 'arm64',
      '--username',
      'u',
      '--password-file',
      '-',
      '--external-system-id',
      'x',
      '--carrier-code',
      'C',
      '--device-url',
      DEVICE_URL,
      '--gnss-path',
      '/dev/ttyACM0',
    ]);
    expect(r.status, r.out).toBe(2);
    expect(r.out).toContain('npm run package -- --arch');
    expect(readdirSync(root)).toEqual([]);
  });
});
