import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { expect, it, onTestFinished } from 'vitest';
import { Agent } from '../../src/agent.js';
import { loadConfig } from '../../src/config/load.js';
import { configSchemas, releaseConfigSchemas, schemaDefaults } from '../../src/config/schema.js';
import { loadZod, zodLoaded } from '../../src/config/zod.js';
import { silentLogger } from '../../src/log.js';
import { PlatformSimulator } from '../../src/sim/index.js';
import { driveText, generateDrive } from '../../src/sim/receiver/index.js';
import { tempDir } from '../helpers/tmp.js';
import { waitFor } from '../helpers/wait.js';
import { startReplayDaemon, writeConfig } from '../e2e/daemon.js';
import { REPO_ROOT } from '../helpers/paths.js';

// zod's CommonJS modules are per process, and vitest runs each file in its own.
it('the daemon lets zod go once its configuration is read, and running never loads it again', async () => {
  const dir = tempDir('ta-zod-');
  const sim = new PlatformSimulator({ users: [{ username: 'agent', password: 'pw' }] });
  const urls = await sim.start();
  onTestFinished(() => sim.stop());
  const replayFile = path.join(dir, 'drive.nmea');
  writeFileSync(replayFile, driveText(generateDrive({ minutes: 3, hz: 10, seed: 5 })));
  const file = writeConfig({ dir, urls, gnss: { replayFile, replaySpeed: 20 }, motion: { enabled: true } });

  const config = loadConfig({ path: file });
  expect(zodLoaded()).toBe(true);
  const zod = new WeakRef(loadZod());
  releaseConfigSchemas();
  expect(zodLoaded()).toBe(false);
  expect((globalThis as { __zod_globalRegistry?: unknown }).__zod_globalRegistry).toBeUndefined();
  // Garbage, not only out of the cache: nothing holds zod's code (a WeakRef lives until the job ends).
  await new Promise((resolve) => setImmediate(resolve));
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
  expect(zod.deref()).toBeUndefined();

  // The agent as `run` starts it: the receiver, the gate and policy (the schema's defaults), the
  // store, the platform, the uploader, the status socket and the motion tracker.
  const agent = new Agent({ config, logger: silentLogger(), tuning: { upload: { minBackoffMs: 100, maxBackoffMs: 1000 } } });
  onTestFinished(() => agent.stop());
  await agent.start();
  await waitFor('20 events delivered', () => sim.events.size >= 20, { timeoutMs: 30_000 });
  expect(zodLoaded()).toBe(false);

  // The defaults stay as plain data; asking for the schemas again loads zod afresh.
  expect(schemaDefaults().recording.pathToleranceM).toBe(10);
  expect(configSchemas().configSchema.shape.dataDir.parse(undefined)).toBe(schemaDefaults().dataDir);
  expect(zodLoaded()).toBe(true);
});

it('`run` lets zod go: the daemon delivering holds none of its modules', { timeout: 90_000 }, async () => {
  const out = path.join(tempDir('ta-zod-probe-'), 'zod-probe.json');
  const probe = path.join(REPO_ROOT, 'test', 'config', 'fixtures', 'zod-probe.mjs');
  // The daemon as the unit starts it (runDaemon, the e2e tests' short retry waits), the probe preloaded.
  const { sim, daemon } = await startReplayDaemon({
    prefix: 'ta-zod-run-',
    drive: { minutes: 3, hz: 10, seed: 6 },
    replaySpeed: 20,
    ready: false,
    env: { ZOD_PROBE_OUT: out },
    nodeArgs: ['--import', probe],
  });
  await waitFor('5 events delivered', () => sim.events.size >= 5, { timeoutMs: 60_000, detail: daemon.log });
  daemon.child.kill('SIGUSR2');
  await waitFor('the probe answers', () => existsSync(out), { timeoutMs: 10_000, detail: daemon.log });
  expect(JSON.parse(readFileSync(out, 'utf8'))).toEqual({ held: 0 });
  daemon.child.kill('SIGTERM');
  await daemon.exited;
});
