export { PlatformSimulator, type PlatformSimulatorOptions, type SimUrls, type RequestListener } from './server.js';
export { ROUTES, type RouteName, type FaultSpec } from './faults.js';
export type { SimStats } from './stats.js';
export type { SimUser, TokenAnswerFault } from './tokens.js';
export type { SimDevice } from './devices.js';
export type { ReceivedEvent, StoredLocation } from './planning.js';
export type { OtmError } from './otm-validate.js';
export { configSnippet } from './snippet.js';
export { RequestTimeline, type TimelineBucket, type TimelineSnapshot } from './timeline.js';
