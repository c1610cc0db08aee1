import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { expect, it, onTestFinished } from 'vitest';
import { Agent } from '../../src/agent.js';
import { loadConfig } from '../../src/config/load.js';
import { configSchemas, releaseConfigSchemas, schemaDefaults } from '../../src/config/schema.js';
import { zodLoaded } from '../../src/config/zod.js';
import { silentLogger } from '../../src/log.js';
import { PlatformSimulator } from '../../src/sim/index.js';
import { driveText, generateDrive } from '../../src/sim/receiver/index.js';
import { tempDir } from '../helpers/tmp.js';
import { waitFor } from '../helpers/wait.js';
import { writeConfig } from '../e2e/daemon.js';

// One test in this file: zod's CommonJS modules are per process, and vitest runs each file in its own.
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
  releaseConfigSchemas();
  expect(zodLoaded()).toBe(false);
  expect((globalThis as { __zod_globalRegistry?: unknown }).__zod_globalRegistry).toBeUndefined();

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
