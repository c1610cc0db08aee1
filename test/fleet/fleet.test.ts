import { describe, expect, it, onTestFinished } from 'vitest';
import { driveVariants } from '../../bench/fleet/drives.js';
import { Fleet } from '../../bench/fleet/fleet.js';
import { runScenario, type Plan } from '../../bench/fleet/scenario.js';
import { simInProcess } from '../../bench/fleet/sim-core.js';
import { tempDir } from '../helpers/tmp.js';

/**
 * The short fleet: 20 real Agents in this process against the simulator, through a
 * staggered start, an events outage and a token-service outage (with every access token revoked),
 * in accelerated time. It asserts what the product promises, never how fast this machine is: no fix
 * lost or sent twice, the per-device request budget, and first retries that are spread.
 */
const SPEED = 30;
const N = 20;
const PLAN: Plan = {
  speed: SPEED,
  startWindowMin: 1,
  steadyFromMin: 2,
  outageFromMin: 5,
  outageToMin: 8,
  drainLimitMin: 15,
  tokenOutageFromMin: 14,
  tokenOutageToMin: 17,
  expireTokensAtTokenOutage: true,
  endMin: 20,
  backlogAgeS: 60,
};

describe('a fleet of 20 agents (bench:fleet, short)', () => {
  it('loses nothing, sends nothing twice, keeps the request budget and spreads its retries', { timeout: 240_000 }, async () => {
    const sim = await simInProcess({ accessTtlS: 3600 / SPEED, refreshTtlS: 86_400 / SPEED, bucketMs: 1000 / SPEED });
    onTestFinished(() => sim.stop());
    const fleet = new Fleet({
      n: N,
      dir: tempDir(),
      urls: sim.urls,
      variants: driveVariants(4, PLAN.endMin + 35),
      scaling: { speed: SPEED, backlogMaxRatePerS: 0.1, startupJitterS: 30 },
    });
    onTestFinished(() => fleet.stop());
    const f = await runScenario(fleet, sim, PLAN);
    await fleet.stop();
    const { timeline: _timeline, ...shown } = f;
    process.stdout.write(`fleet of ${N}: ${JSON.stringify(shown)}\n`);

    expect(f.delivery.recorded).toBeGreaterThan(N * 5);
    expect(f.delivery).toMatchObject({ lost: 0, duplicated: 0, pending: 0, deadLettered: 0 });
    expect(f.delivery.delivered).toBe(f.delivery.recorded);
    // The budget: one password grant and one upsert per device, whatever the outages did.
    expect(f.budget.passwordGrantsAfterFirst).toBe(0);
    expect(f.budget.upsertsAfterRegistration).toBe(0);
    // At most one refresh per device, for the revoked token (hour-long tokens: none due in 20
    // minutes); an agent that had nothing to send after the revocation did not need one yet.
    const refreshes = Math.round(f.budget.refreshesPerDeviceHour * N * f.simulatedHours);
    expect(refreshes).toBeGreaterThan(0);
    expect(refreshes).toBeLessThanOrEqual(N);
    // The outage reached the agents that had something to send (a parked one records every 30
    // minutes), and their first retries were spread, not synchronized.
    expect(f.firstRetries.vehicles).toBeGreaterThanOrEqual(N / 2);
    expect(f.firstRetries.maxDelayS - f.firstRetries.minDelayS).toBeGreaterThan(0);
    const firstDelays = fleet.retries.filter((r) => r.failures === 1).map((r) => r.delayMs);
    expect(new Set(firstDelays).size).toBeGreaterThan(firstDelays.length / 2);
    // Start-up spread: the first password grants did not all come in one simulated second.
    expect(f.startup.passwordGrantPeakPerS).toBeLessThan(N);
    expect(f.drain.minutesAfterOutage).toBeDefined();
  });
});
