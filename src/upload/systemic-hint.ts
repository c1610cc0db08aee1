import { configHint } from '../retry/status-table.js';

/**
 * What a person should check when the platform refuses every event. The intake path
 * is not published (docs/platform-contract.md), so integrators get platform.eventsPath wrong; a proxy in
 * front of the platform answers for it; or the platform expects another event shape. The hint
 * leads with the likeliest cause for the status and always names all three.
 */
export function systemicHint(kind: 'config' | 'refuses-everything', status: number): string {
  const all =
    'check platform.eventsPath (the intake path is not published: ask the platform contact), the proxy, and the event shape the platform expects';
  if (kind === 'refuses-everything')
    return `the platform refuses every event with HTTP ${status} while accepting none: ${all}; every fix stays queued`;
  const likeliest = configHint('events', status);
  return `every event is answered HTTP ${status}: ${likeliest}; else ${all}; every fix stays queued`;
}
