/**
 * npm run bench:fleet: the fleet drain after a 2-hour outage in simulated time (bench/fleet/drain-main.ts);
 * npm run bench:fleet -- --real: a thousand real Agents in accelerated real time (bench/fleet/real-main.ts).
 */
if (process.argv.includes('--real')) await import('./fleet/real-main.js');
else await import('./fleet/drain-main.js');
