import type { Database } from './database.js';
import { DeviceStore } from './device-store.js';
import { MetaStore } from './meta.js';
import { TokenStore } from './token-store.js';

/**
 * The record stores over one open database, built by the CLI context and by the daemon at each
 * open of its store (store-swap.ts, under the store handle the components hold: store-handle.ts),
 * and handed to the components as the small interfaces they declare (TokenRecords, DeviceRecords,
 * SessionRecords): nothing outside store/ sees the driver.
 *
 * Their constructors prepare SQL, which reads the schema: called right after openDatabase (whose
 * migrations read it first), a damaged schema surfaces here, in the root's start-up path that
 * already handles a damaged file, and never later from inside a component's constructor.
 */
export interface Stores {
  meta: MetaStore;
  tokens: TokenStore;
  devices: DeviceStore;
}

export function openStores(db: Database): Stores {
  const meta = new MetaStore(db);
  return { meta, tokens: new TokenStore(db, meta), devices: new DeviceStore(db) };
}
