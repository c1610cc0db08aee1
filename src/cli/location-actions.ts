import type { Config } from '../config/load.js';
import { defaultAddress } from '../config/addresses.js';
import { CONFIG_DEFAULTS } from '../config/defaults.js';
import { AgentError, ConfigError, EXIT_CONFIG, EXIT_FAILURE, describeError, isAgentError } from '../errors.js';
import { QualityGate } from '../gnss/quality-gate.js';
import { buildHereLocation } from '../sites/build.js';
import { captureLocation, DEFAULT_MAX_SPREAD_M, defaultTimeoutMs, gateFrom, type CaptureResult } from '../sites/capture.js';
import { chooseFeed } from '../fix-feed/choose-feed.js';
import { formatIssue, type LocationIssue, type OtmLocation } from '../sites/site-types.js';
import { readLocationInput } from '../sites/read-input.js';
import { retryLine, sendLocations, summaryLine } from '../sites/send.js';
import { LocationUploader } from '../sites/upload.js';
import { validateLocationBatch } from '../sites/validate.js';
import type { CommonOptions, HereOptions } from './location-options.js';
import { oneShotFailure, rejectedPasswordSentence } from './failure-message.js';
import { openPlatformContext } from './platform-context.js';
import { cliLogger, loadCliConfig } from './context.js';

/** The work of `location put|here` (location.ts declares the commands and loads this on use). */

export async function putLocations(file: string, opts: CommonOptions): Promise<void> {
  await withExitCode(async (signal) => {
    const input = await readLocationInput(file);
    const batch = checked(validateLocationBatch(input.value), input.name, opts.strict === true);
    if (!batch) return EXIT_CONFIG;
    return deliver(batch, Array.isArray(input.value), opts, signal, opts.dryRun ? dryRunConfig(opts.config) : undefined);
  });
}

export async function surveyHere(opts: HereOptions): Promise<void> {
  await withExitCode(async (signal) => here(opts, signal));
}

async function here(opts: HereOptions, signal: AbortSignal): Promise<number> {
  const build = (lat: number, lon: number) =>
    buildHereLocation({
      name: opts.name,
      type: opts.type,
      lat,
      lon,
      address: {
        street: opts.street,
        houseNumber: opts.houseNumber,
        houseNumberAddition: opts.houseNumberAddition,
        postalCode: opts.postalCode,
        city: opts.city,
        country: opts.country,
      },
      ...(opts.id !== undefined ? { id: opts.id } : {}),
      ...(opts.phone !== undefined ? { phone: opts.phone } : {}),
      ...(opts.email !== undefined ? { email: opts.email } : {}),
      ...(opts.contactName !== undefined ? { contactName: opts.contactName } : {}),
    });
  // Check the flags before a minute of sampling (the coordinate is a placeholder here).
  const provisional = build(52, 5);
  const early = validateLocationBatch(provisional);
  if (!early.ok) {
    printIssues(
      'the options are invalid (nothing was surveyed or sent)',
      early.errors.map((e) => ({ ...e, path: optionName(e.path, provisional) })),
    );
    return EXIT_CONFIG;
  }
  const config = loadCliConfig(opts.config);
  const logger = cliLogger(config);
  const feed = await chooseFeed(config, logger, opts.source);
  const gate = new QualityGate({ ...config.quality, minMode: 3 });
  const tty = process.stderr.isTTY === true;
  process.stderr.write(`sampling ${opts.samples} fixes from ${feed.description} ...\n`);
  const result = await captureLocation(feed, {
    samples: opts.samples,
    maxSpreadM: opts.maxSpread ?? DEFAULT_MAX_SPREAD_M,
    timeoutMs: opts.timeout !== undefined ? opts.timeout * 1000 : defaultTimeoutMs(opts.samples),
    gate: gateFrom((f) => gate.check(f)),
    signal,
    onProgress: (n, of) => {
      if (tty) process.stderr.write(`\r  ${n}/${of} fixes${n === of ? '\n' : ''}`);
    },
  });
  process.stderr.write(`${describeCapture(result)}\n`);
  const batch = checked(validateLocationBatch(build(result.lat, result.lon)), 'the surveyed location', opts.strict === true);
  if (!batch) return EXIT_CONFIG;
  return deliver(batch, false, opts, signal, config);
}

function describeCapture(r: CaptureResult): string {
  const hdop = r.meanHdop !== undefined ? `, mean HDOP ${r.meanHdop.toFixed(1)}` : '';
  return `averaged ${r.samples} fixes: lat ${r.lat.toFixed(7)}, lon ${r.lon.toFixed(7)}; spread ${r.spreadM.toFixed(1)} m (largest distance from the average), RMS ${r.rmsM.toFixed(1)} m${hdop}`;
}

/** Prints errors and warnings; returns the locations to send, or undefined when nothing may be sent. */
function checked(batch: ReturnType<typeof validateLocationBatch>, name: string, strict: boolean): Checked | undefined {
  for (const w of batch.warnings) process.stderr.write(`warning: ${formatIssue(w)}\n`);
  if (!batch.ok) {
    printIssues(`${name} is invalid (nothing was sent)`, batch.errors);
    return undefined;
  }
  if (strict && batch.warnings.length > 0) {
    process.stderr.write(`telematics-agent: ${name} has warnings and --strict is set (nothing was sent)\n`);
    return undefined;
  }
  const derived = new Map<string, string>();
  for (const item of batch.items) if (item.generatedId && item.location) derived.set(item.location.id, item.idFrom ?? 'name and address');
  return { locations: batch.items.map((i) => i.location as OtmLocation), derived };
}

interface Checked {
  locations: OtmLocation[];
  /** Ids this command derived (the input had none), with what each was derived from. */
  derived: Map<string, string>;
}

/** Said only for a location that was stored (or, with --dry-run, would be): never for one that failed. */
function derivedIdLine(location: OtmLocation, from: string, dryRun: boolean): string {
  const label = `${location.id}${location.name ? ` (${location.name})` : ''}`;
  const line = `${dryRun ? 'would use' : 'used'} id ${label}, derived from its ${from}: uploading the same location again updates it`;
  // A name alone names many sites ("Depot"): another site given the same name and no address gets
  // the same id and would replace this one on the platform.
  return from === 'name'
    ? `${line}; another site of this name without an address would replace it: give it an id (--id, or "id" in the file) or an address`
    : line;
}

async function deliver(
  batch: Checked,
  asArray: boolean,
  opts: CommonOptions,
  signal: AbortSignal,
  loaded?: Config | string,
): Promise<number> {
  const { locations, derived } = batch;
  if (opts.dryRun) {
    const where =
      typeof loaded === 'string'
        ? loaded
        : loaded
          ? `${loaded.platform.planningUrl}${loaded.platform.locationsPath} (from ${loaded.source})`
          : '';
    process.stderr.write(`dry run: would send ${locations.length} request${locations.length === 1 ? '' : 's'} PUT ${where}\n`);
    for (const l of locations) {
      const from = derived.get(l.id);
      if (from !== undefined) process.stderr.write(`${derivedIdLine(l, from, true)}\n`);
    }
    process.stdout.write(`${JSON.stringify(asArray ? locations : locations[0], null, 2)}\n`);
    return 0;
  }
  const ctx = openPlatformContext(opts.config);
  try {
    const p = ctx.config.platform;
    const uploader = new LocationUploader({
      requester: ctx.platform.requester,
      url: `${p.planningUrl}${p.locationsPath}`,
      onRetry: (n) => process.stderr.write(`${retryLine(n)}\n`),
    });
    const output = {
      info: (line: string) => process.stderr.write(`${line}\n`),
      stored: (l: OtmLocation) => {
        const from = derived.get(l.id);
        if (from !== undefined) process.stderr.write(`  ${derivedIdLine(l, from, false)}\n`);
      },
      failure: (e: AgentError) => {
        const sentence = rejectedPasswordSentence(e, ctx.config);
        return sentence ? `location upload failed: ${sentence}` : e.message;
      },
    };
    const report = await sendLocations(locations, uploader, output, signal);
    if (report.stored.length > 0) process.stdout.write(`${JSON.stringify(asArray ? report.stored : report.stored[0], null, 2)}\n`);
    if (asArray) process.stderr.write(`${summaryLine(locations.length, report)}\n`);
    if (report.failure) return report.failure.errorClass === 'config' ? EXIT_CONFIG : EXIT_FAILURE;
    return report.rejected > 0 ? EXIT_FAILURE : 0;
  } finally {
    await ctx.close();
  }
}

/**
 * The address a dry run would send to: from the configuration when it can be read (--config,
 * $TELEMATICS_AGENT_CONFIG or the default file), else the production default, saying why. A dry
 * run needs no configuration, so an unreadable one is not an error here.
 */
function dryRunConfig(configPath: string | undefined): Config | string {
  try {
    return loadCliConfig(configPath);
  } catch (e) {
    const url = `${defaultAddress('planningUrl', 'production')}${CONFIG_DEFAULTS.platform.locationsPath}`;
    const why = e instanceof ConfigError ? (e.issues[0]?.message ?? e.message) : describeError(e);
    return `${url} (the production default: the configuration was not used: ${why})`;
  }
}

function printIssues(title: string, issues: readonly LocationIssue[]): void {
  process.stderr.write(`telematics-agent: ${title}:\n${issues.map((i) => `  - ${formatIssue(i)}`).join('\n')}\n`);
}

/** `administrativeReference.street` -> `--street`, `contactDetails[1].value` -> `--email`, for `location here`. */
function optionName(path: string, built: Record<string, unknown>): string {
  const flag = (s: string) => `--${s.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
  const address = /^administrativeReference\.(\w+)$/.exec(path);
  if (address?.[1]) return flag(address[1]);
  if (path === 'id' || path === 'name' || path === 'type') return `--${path}`;
  const contact = /^contactDetails\[(\d+)\]/.exec(path);
  if (contact) {
    const type = (built.contactDetails as { type: string }[] | undefined)?.[Number(contact[1])]?.type;
    return type === 'name' ? '--contact-name' : type === 'phone' ? '--phone' : type === 'email' ? '--email' : path;
  }
  return path;
}

/** Runs a command body with Ctrl-C support and turns its errors into an exit code and one line. */
async function withExitCode(body: (signal: AbortSignal) => Promise<number>): Promise<void> {
  const abort = new AbortController();
  const onSignal = () => abort.abort(new AgentError('INTERRUPTED', 'interrupted', { class: 'internal' }));
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    process.exitCode = await body(abort.signal);
  } catch (e) {
    if (abort.signal.aborted) {
      process.stderr.write('telematics-agent: interrupted; nothing more was sent\n');
      process.exitCode = 130;
      return;
    }
    process.stderr.write(
      `telematics-agent: ${isAgentError(e) && e.code !== 'CREDENTIALS_REJECTED' ? e.message : oneShotFailure('location', e)}\n`,
    );
    process.exitCode = isAgentError(e) && e.errorClass === 'config' ? EXIT_CONFIG : EXIT_FAILURE;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}
