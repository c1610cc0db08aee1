import type { FeedChoice } from '../fix-feed/choose-feed.js';

/** The options of `location put` and `location here`, as commander hands them to the actions. */
export interface CommonOptions {
  config?: string;
  dryRun?: boolean;
  strict?: boolean;
}

export interface HereOptions extends CommonOptions {
  name: string;
  type: string;
  samples: number;
  maxSpread?: number;
  timeout?: number;
  source: FeedChoice;
  id?: string;
  street?: string;
  houseNumber?: string;
  houseNumberAddition?: string;
  postalCode?: string;
  city?: string;
  country?: string;
  phone?: string;
  email?: string;
  contactName?: string;
}
