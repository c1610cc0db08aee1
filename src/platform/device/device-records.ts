/**
 * What the device registrar needs of the database: the identity chosen once and the last
 * registration. Declared here, where it is used; src/store/device-store.ts implements it in SQLite
 * (tables device_identity and device_registration), and the composition root hands it over.
 */

export interface StoredIdentity {
  externalDeviceId: string;
  source: string;
  chosenAt: number;
}

export interface StoredRegistration {
  externalSystemId: string;
  externalDeviceId: string;
  deviceUUID: string;
  configHash: string;
  response: Record<string, unknown>;
  registeredAt: number;
}

export interface DeviceRecords {
  identity(): StoredIdentity | undefined;
  /** Stores the identity unless one is stored already (first writer wins); returns the stored one. */
  keepIdentity(externalDeviceId: string, source: string, chosenAt: number): StoredIdentity;
  registration(): StoredRegistration | undefined;
  saveRegistration(reg: StoredRegistration): void;
}
