/**
 * `npm run bench:footprint -- --majors [--deb FILE] [the bench's other flags]`: the footprint
 * on each Node major the amd64 package serves, one full run each (a child of this bench with
 * `--node`), on the package's own files: its daemon and the better-sqlite3 build of each ABI it
 * carries. Node 20 is this machine's node when it is major 20 (CI's and the build machine's; a
 * gateway's is Debian's 20.19, which `--root` measures); 22, 24 and 26 are the official releases
 * scripts/node-releases.sh fetches. A table of the goals' figures per major at the end.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

interface Result {
  node: string;
  rss: number;
  peak: number;
  bare: number;
  libs: number;
  startMs: number;
  writesPerHour: number;
  cpu: number;
  events: number;
}

const say = (s: string) => process.stdout.write(`${s}\n`);
const mb = (b: number) => (b / 1e6).toFixed(1);

/** The official releases beside this node, as the package script takes them (bin dirs, fetched once). */
function releaseNodes(repo: string): string[] {
  const r = spawnSync(
    'bash',
    ['-c', '. scripts/node-releases.sh && for v in $NODE_RELEASES; do d=$(node_release "$v") || exit 1; echo "$d/bin/node"; done'],
    { cwd: repo, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] },
  );
  if (r.status !== 0) throw new Error('could not fetch the official Node releases (scripts/node-releases.sh): see above');
  return r.stdout.trim().split('\n');
}

function run(script: string, args: string[]): Promise<Result> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      const text = d.toString();
      out += text;
      process.stdout.write(text.replace(/^FOOTPRINT_RESULT .*\n/m, ''));
    });
    child.once('exit', (code) => {
      const line = /^FOOTPRINT_RESULT (.*)$/m.exec(out)?.[1];
      if (code === 0 && line) resolve(JSON.parse(line) as Result);
      else reject(new Error(`the footprint run ${args.join(' ')} exited with ${code}`));
    });
  });
}

export async function footprintMajors(repo: string, script: string): Promise<void> {
  const argv = process.argv.slice(2);
  const debArg = argv.indexOf('--deb');
  const version = (JSON.parse(readFileSync(path.join(repo, 'package.json'), 'utf8')) as { version: string }).version;
  const deb = debArg >= 0 ? path.resolve(argv[debArg + 1] ?? '') : path.join(repo, `release/telematics-agent_${version}_amd64.deb`);
  if (!existsSync(deb)) throw new Error(`${deb} is missing: make it with npm run package -- --arch amd64, or name one with --deb FILE`);
  const passOn = argv.filter((a, i) => a !== '--majors' && a !== '--deb' && argv[i - 1] !== '--deb');
  const unpacked = mkdtempSync(path.join(os.tmpdir(), 'ta-footprint-pkg-'));
  try {
    const x = spawnSync('dpkg-deb', ['-x', deb, unpacked], { stdio: 'inherit' });
    if (x.status !== 0) throw new Error(`dpkg-deb -x ${deb} failed`);
    const cli = path.join(unpacked, 'opt/telematics-agent/dist/cli/main.js');
    const nodes = [...(process.versions.node.startsWith('20.') ? [process.execPath] : []), ...releaseNodes(repo)];
    const results: Result[] = [];
    for (const node of nodes) {
      say(`\n=== ${node} ===`);
      results.push(await run(script, [...passOn, '--node', node, '--cli', cli]));
    }
    say(
      `\nfootprint per Node major (${path.basename(deb)}, the same flags and drive each; goals: daemon <= +10 MB above node with the libraries, peak <= +5 MB above the end)`,
    );
    say('| node | daemon RSS | peak | node + libraries | daemon above it | peak above the end | bare node | start | writes/h | CPU |');
    say('| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |');
    for (const r of results)
      say(
        `| ${r.node} | ${mb(r.rss)} MB | ${mb(r.peak)} MB | ${mb(r.libs)} MB | +${mb(r.rss - r.libs)} MB | +${mb(r.peak - r.rss)} MB | ${mb(r.bare)} MB | ${Math.round(r.startMs)} ms | ${(r.writesPerHour / 1e6).toFixed(2)} MB | ${(r.cpu * 100).toFixed(2)} % |`,
      );
  } finally {
    rmSync(unpacked, { recursive: true, force: true });
  }
}
