/**
 * bench:fleet's simulator process: the platform simulator with a request timeline, driven over
 * IPC by the fleet process (sim-process.ts), so that the fleet's CPU and the platform's are apart.
 */
import { SimCore, type SimOptions } from './sim-core.js';

interface Call {
  id: number;
  op: 'setFaults' | 'expireAccessTokens' | 'restartTimeline' | 'timeline' | 'summary' | 'stop';
  args?: unknown[];
}

const options = JSON.parse(process.argv[2] ?? '{}') as SimOptions;
const core = new SimCore(options);
const urls = await core.start();
process.send!({ ready: urls });
// The fleet process ended (or was stopped): so does its simulator.
process.once('disconnect', () => process.exit(0));

process.on('message', (call: Call) => {
  void (async () => {
    try {
      let result: unknown;
      switch (call.op) {
        case 'setFaults':
          core.setFaults(call.args![0] as never, call.args![1] as never);
          break;
        case 'expireAccessTokens':
          core.expireAccessTokens();
          break;
        case 'restartTimeline':
          core.restartTimeline();
          break;
        case 'timeline':
          result = core.timeline();
          break;
        case 'summary':
          result = core.summary();
          break;
        case 'stop':
          await core.stop();
          break;
      }
      process.send!({ id: call.id, result });
      if (call.op === 'stop') process.disconnect();
    } catch (e) {
      process.send!({ id: call.id, error: (e as Error).message });
    }
  })();
});
