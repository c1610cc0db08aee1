import { runDaemonEntry } from '../daemon.js';
import { DEMO_TUNING } from './demo-config.js';

/**
 * The demo's daemon: `telematics-agent run --config <file>` with the demo's short upload backoffs
 * (DEMO_TUNING), which are not configuration. Started by run-demo.ts as `node demo-daemon.js <file>`.
 */
void runDaemonEntry(process.argv[2], { tuning: DEMO_TUNING });
