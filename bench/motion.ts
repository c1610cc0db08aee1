/**
 * What the movement events add on the SIM: the urban delivery drives of bench:policy (seeds 7-9,
 * src/sim/receiver/urban-route.ts: red lights of 15-60 s, a 10-minute depot stop, a highway
 * stretch), generated at 10 Hz as NMEA, decoded and gated as the daemon does, and run through the
 * movement detector and the odometer with the defaults (motion.stopAfterS 60). Prints the events
 * per driving hour, their body, and the month (220 h of driving) at bench:wire's all-in bytes per
 * event over the drive (995 B: h2, bearer indexed, echoed answer, connections and refreshes),
 * against the location updates' month at the same figure (docs/cellular-data.md).
 * Engine events come from the ignition input, not the drive: two a trip, counted per trip.
 */
import { gatedFixes } from './gated-fixes.js';
import type { Fix } from '../src/fix/fix.js';
import { MovementDetector } from '../src/motion/movement.js';
import { Odometer } from '../src/motion/odometer.js';
import { toVehicleEvent } from '../src/platform/otm5/vehicle-event.js';
import { driveText, generateDrive, planUrbanDeliveryRoute } from '../src/sim/receiver/index.js';
import { seededRandom } from '../src/sim/random.js';

const HOURS_PER_MONTH = 10 * 22;
const ALL_IN_B = Number(process.env.MOTION_EVENT_BYTES ?? 995);
const LOCATION_EVENTS_PER_H = Number(process.env.LOCATION_EVENTS_PER_H ?? 157);

const body = JSON.stringify(
  toVehicleEvent(
    {
      eventType: 'stopMovingEvent',
      eventId: '2ed6657d-e927-568b-95e1-2665a8aea6a2',
      time: Date.UTC(2026, 10, 22, 8, 30, 15),
      lat: 52.1938879,
      lon: 5.4066468,
      odometerM: 123_456_789,
    },
    { externalSystemId: 'acme-tms', externalDeviceId: 'pi-0001', source: 'config', deviceUUID: '3f1c2b9e-8a7d-4c1e-9b2a-5d6e7f801234' },
    { licensePlate: 'AB-12-CD' },
  ),
).length;

let events = 0;
let hours = 0;
for (const seed of [7, 8, 9]) {
  const legs = planUrbanDeliveryRoute({ random: seededRandom(seed) });
  const drive = generateDrive({ legs, seed, hz: 10 });
  const fixes = gatedFixes(Buffer.from(driveText(drive), 'latin1'));
  const detector = new MovementDetector();
  const odometer = new Odometer({ stillSpeedKmh: 3 });
  const changes: string[] = [];
  for (const f of fixes) {
    odometer.offer(f);
    for (const c of detector.offer(f)) {
      if (!c.silent) changes.push(`${c.kind} ${new Date(c.time).toISOString().slice(11, 19)}`);
    }
  }
  const h = drive.epochs / drive.hz / 3600;
  events += changes.length;
  hours += h;
  console.log(
    `urban delivery seed ${seed}: ${(h * 60).toFixed(0)} min at 10 Hz, odometer ${(odometer.metres / 1000).toFixed(2)} km; movement events: ${changes.join(', ') || 'none'}`,
  );
}
const perHour = events / hours;
const month = perHour * HOURS_PER_MONTH;
const locationMonth = LOCATION_EVENTS_PER_H * HOURS_PER_MONTH;
console.log(
  `\nmovement events per driving hour: ${perHour.toFixed(2)} (${events} over ${(hours * 60).toFixed(0)} min, seeds 7-9); event body ${body} B (plate, odometer)`,
);
console.log(
  `month of driving (${HOURS_PER_MONTH} h): ${month.toFixed(0)} movement events, ${((month * ALL_IN_B) / 1e6).toFixed(2)} MB at ${ALL_IN_B} B/event all in`,
);
console.log(
  `engine events (ignition input): 2 a trip; at 10 trips a day on 22 days 440 a month, ${((440 * ALL_IN_B) / 1e6).toFixed(2)} MB`,
);
console.log(
  `against the location updates (${LOCATION_EVENTS_PER_H}/h, ${((locationMonth * ALL_IN_B) / 1e6).toFixed(1)} MB): +${(((month + 440) / locationMonth) * 100).toFixed(1)} % events, month ${(((locationMonth + month + 440) * ALL_IN_B) / 1e6).toFixed(1)} MB of driving`,
);
