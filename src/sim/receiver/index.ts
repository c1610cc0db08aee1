export { generateDrive, driveText, DEFAULT_DRIVE_START_MS, type DriveOptions, type SyntheticDrive, type PhaseSpan } from './drive.js';
export type { Phase, TruthSample, Leg } from './route.js';
export { checksum } from './nmea-format.js';
export { planUrbanDeliveryRoute, describeUrbanRoute } from './urban-route.js';
export { planDenseGridRoute, planWindingRuralRoute, planHighwayRoute } from './more-routes.js';
export type { Impairment, AntennaChange, AntennaWord } from './impairments.js';
