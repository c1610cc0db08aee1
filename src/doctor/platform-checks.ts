/**
 * Platform checks: each address resolves and answers (TLS verified; plain http only on loopback
 * for the simulator), the credentials work (the agent's valid token, else a password grant), the
 * device is registered. Seams: DNS lookup, an HTTP probe, a password grant, the agent's token
 * state and the stored registration, so the tests run against the simulator on loopback.
 */
import { AgentError, ConfigError, describeError } from '../errors.js';
import { describeClockOffset } from '../system/clock-offset.js';
import { printable } from '../terminal/printable.js';
import { fail, pass, skip, warn, type CheckResult } from './check.js';

export interface PlatformProbes {
  lookup(host: string): Promise<string>;
  /** Any HTTP status means the server answered over a verified connection. */
  probe(url: string): Promise<number>;
  /** A password grant; resolves 'accepted' or 'rejected', throws on transport failures. */
  grant(): Promise<'accepted' | 'rejected'>;
  /**
   * What shows the credentials working without a grant (the running agent's valid token, a valid
   * stored pair), or undefined when nothing does.
   */
  workingToken?(): string | undefined;
  /**
   * The registered device's UUID and who said so (the running agent, the database, the platform);
   * undefined only when the platform was asked and does not know the device. Throws (CannotAsk)
   * when it could not be asked: no device id, no token.
   */
  registeredDevice(): Promise<{ deviceUUID: string; from: string } | undefined>;
}

/** The platform could not be asked whether it knows the device; the message says why. */
export class CannotAsk extends Error {}

export async function checkAddresses(urls: Record<string, string>, p: PlatformProbes): Promise<CheckResult[]> {
  const out: CheckResult[] = [];
  for (const [key, url] of Object.entries(urls)) {
    const name = `platform ${key}`;
    const host = new URL(url).hostname;
    try {
      await p.lookup(host);
    } catch (e) {
      out.push(
        fail(
          name,
          `${host} does not resolve (${describeError(e)})`,
          'check DNS and the mobile data connection, or the address in platform.' + key,
        ),
      );
      continue;
    }
    try {
      const status = await p.probe(url);
      out.push(pass(name, `${new URL(url).origin} answers (HTTP ${status})`));
    } catch (e) {
      const msg = describeError(e);
      out.push(fail(name, `${new URL(url).origin}: ${msg}`, addressFix(e, msg)));
    }
  }
  return out;
}

/** The fix of an address check that failed on a certificate judged by a clock measured wrong against GNSS time. */
export const CLOCK_FIX = 'set the system clock';

/**
 * What to do about a failed address check. A certificate outside its dates by a clock that GNSS
 * time shows wrong (PLATFORM_TLS_CLOCK with the offset measured) is the clock alone: neither the CA
 * nor the configuration can be at fault, and the advice must not send a technician to them.
 */
function addressFix(e: unknown, msg: string): string {
  const code = e instanceof AgentError ? e.code : undefined;
  const offsetMs = e instanceof AgentError ? e.details?.clockOffsetMs : undefined;
  if (code === 'PLATFORM_TLS_CLOCK' && typeof offsetMs === 'number')
    return `${CLOCK_FIX} (it is ${describeClockOffset(offsetMs)} GNSS time): TLS judges the certificate by it; enable time sync (systemd-timesyncd or chrony)`;
  if (code === 'PLATFORM_TLS_CLOCK')
    return 'check the system clock: the certificate is outside its dates by it (no GNSS time to compare with)';
  if (code === 'PLATFORM_TLS' && /agrees with GNSS/.test(msg))
    return "the platform's certificate is out of date: tell the platform's operator";
  return /certificate|CERT|TLS|SSL/i.test(msg)
    ? 'check the system clock and platform.caFile; TLS verification stays on'
    : 'check the network path (firewall, APN) to this host';
}

/**
 * `addresses`: the address checks' results, so that the advice names the check that really failed
 * ("fix the platform address checks above first" was given when they had all passed).
 */
export async function checkCredentials(
  p: PlatformProbes,
  addresses: readonly CheckResult[] = [],
  options: { testPassword?: boolean; passwordOrigin?: string } = {},
): Promise<CheckResult> {
  // The platform asks that the password not stand in for refreshing (docs/platform-contract.md, Tokens): a doctor
  // run every minute by a script would otherwise make a grant a minute. A working token is shown
  // as it is; the password is tried when nothing works, or when the technician asks.
  const working = options.testPassword ? undefined : p.workingToken?.();
  if (working !== undefined) return pass('credentials', `${working}; the password was not tried (doctor --test-password tries it)`);
  try {
    const r = await p.grant();
    return r === 'accepted'
      ? pass('credentials', 'the token service accepted the password (one password grant)')
      : fail(
          'credentials',
          'the token service rejected the user name or password',
          // Name where this password comes from: an inline one has no password file to fix.
          `correct credentials.username or ${options.passwordOrigin ?? 'the password'} for this environment`,
        );
  } catch (e) {
    // The password could not be read (a password file missing or open to others): the token
    // service was not asked, so no address check is to blame. Each issue whole, as config check says it.
    if (e instanceof ConfigError)
      return fail(
        'credentials',
        `not tried: the password cannot be read (${e.issues.map((i) => `${i.path}: ${i.message}`).join('; ')})`,
        'put the password where the key named here says (a file of mode 0600), then run doctor again',
      );
    const auth = addresses.find((r) => r.name === 'platform authUrl' && r.verdict === 'FAIL');
    return warn(
      'credentials',
      `could not ask the token service: ${describeError(e)}`,
      auth
        ? 'fix the failed "platform authUrl" check first'
        : 'the token service answered the address check but not the password grant: try again, and check platform.authUrl ends in /api/v1',
    );
  }
}

export async function checkRegistration(p: PlatformProbes): Promise<CheckResult> {
  try {
    const found = await p.registeredDevice();
    return found
      ? pass('device registered', `deviceUUID ${printable(found.deviceUUID)} (from ${found.from})`)
      : warn(
          'device registered',
          'not registered yet (the platform does not know this device)',
          'start the service (it registers on start) or run: telematics-agent register',
        );
  } catch (e) {
    return skip('device registered', `could not ask the platform (${describeError(e)})`);
  }
}
