import type { DeviceRecords, StoredIdentity, StoredRegistration } from '../platform/device/device-records.js';
import type { Database } from './database.js';

/** DeviceRecords (platform/device/device-records.ts) in tables device_identity and device_registration of migration 1. */
export class DeviceStore implements DeviceRecords {
  readonly #getIdentity;
  readonly #insertIdentity;
  readonly #getRegistration;
  readonly #putRegistration;

  constructor(db: Database) {
    this.#getIdentity = db.prepare<[], { external_device_id: string; source: string; chosen_at: number }>(
      'SELECT external_device_id, source, chosen_at FROM device_identity WHERE id = 1',
    );
    // First writer wins: two processes probing at once keep the same identity.
    this.#insertIdentity = db.prepare(
      'INSERT INTO device_identity (id, external_device_id, source, chosen_at) VALUES (1, ?, ?, ?) ON CONFLICT(id) DO NOTHING',
    );
    this.#getRegistration = db.prepare<
      [],
      {
        external_system_id: string;
        external_device_id: string;
        device_uuid: string;
        config_hash: string;
        response_json: string;
        registered_at: number;
      }
    >(
      'SELECT external_system_id, external_device_id, device_uuid, config_hash, response_json, registered_at FROM device_registration WHERE id = 1',
    );
    this.#putRegistration = db.prepare(
      `INSERT INTO device_registration (id, external_system_id, external_device_id, device_uuid, config_hash, response_json, registered_at)
       VALUES (1, @externalSystemId, @externalDeviceId, @deviceUUID, @configHash, @response, @registeredAt)
       ON CONFLICT(id) DO UPDATE SET external_system_id = excluded.external_system_id, external_device_id = excluded.external_device_id,
         device_uuid = excluded.device_uuid, config_hash = excluded.config_hash, response_json = excluded.response_json, registered_at = excluded.registered_at`,
    );
  }

  identity(): StoredIdentity | undefined {
    const r = this.#getIdentity.get();
    return r ? { externalDeviceId: r.external_device_id, source: r.source, chosenAt: r.chosen_at } : undefined;
  }

  /** Stores the identity unless one is stored already; returns the stored one. */
  keepIdentity(externalDeviceId: string, source: string, chosenAt: number): StoredIdentity {
    this.#insertIdentity.run(externalDeviceId, source, chosenAt);
    const stored = this.identity();
    if (!stored) throw new Error('device_identity row missing after insert');
    return stored;
  }

  registration(): StoredRegistration | undefined {
    const r = this.#getRegistration.get();
    if (!r) return undefined;
    let response: Record<string, unknown> = {};
    try {
      response = JSON.parse(r.response_json) as Record<string, unknown>;
    } catch {
      /* informational only */
    }
    return {
      externalSystemId: r.external_system_id,
      externalDeviceId: r.external_device_id,
      deviceUUID: r.device_uuid,
      configHash: r.config_hash,
      response,
      registeredAt: r.registered_at,
    };
  }

  saveRegistration(reg: StoredRegistration): void {
    this.#putRegistration.run({ ...reg, response: JSON.stringify(reg.response) });
  }
}
