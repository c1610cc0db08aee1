/**
 * The layering of src/ (docs/architecture.md), checked by `npm run lint:deps` in CI. Each folder may
 * import only the folders below it; an import across a boundary fails with the rule's name. Type-only
 * imports count: a type is a dependency a reader has to follow too.
 */

/** Files that everything may use: errors, logs, the version, type declarations. */
const BASE = ['src/errors\\.ts$', 'src/log\\.ts$', 'src/log-throttle\\.ts$', 'src/version\\.ts$', 'src/types/'];

/** A rule: files under `from` import only from `allowed` (and their own folder, and packages). */
function layer(name, from, allowed, comment, known = []) {
  return {
    name,
    comment,
    severity: 'error',
    from: { path: `^src/${from}/`, ...(known.length ? { pathNot: known } : {}) },
    to: { path: '^src/', pathNot: [`^src/${from}/`, ...BASE.map((p) => `^${p}`), ...allowed.map((f) => `^src/${f}/`)] },
  };
}

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'A cycle between files: break it by moving the shared part down or declaring a narrow interface.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'base-stands-alone',
      comment: 'errors.ts, log.ts, log-throttle.ts, version.ts and types/ are used by everything, so they import nothing of the agent.',
      severity: 'error',
      from: { path: BASE.map((p) => `^${p}`) },
      to: { path: '^src/', pathNot: BASE.map((p) => `^${p}`) },
    },
    layer('fix-is-data', 'fix', [], 'fix/ is the fix and its stages: plain data every layer passes on.'),
    layer('retry-is-policy', 'retry', [], 'retry/ is the backoff formula and the status table: pure policy.'),
    layer(
      'system-below-store',
      'system',
      [],
      'system/ is the machine (clock, files, sd_notify, locks): it knows nothing of the database; components hand it what it needs.',
    ),
    layer(
      'config-below-components',
      'config',
      ['system'],
      'config/ reads and checks the file; the components it configures depend on it, not the reverse.',
    ),
    layer(
      'gnss-takes-config',
      'gnss',
      ['config', 'fix', 'retry', 'system'],
      'gnss/ turns bytes into fixes; it knows nothing of the store, the platform or the socket.',
    ),
    layer(
      'motion-reads-fixes',
      'motion',
      ['config', 'fix', 'gnss', 'retry', 'system'],
      "motion/ derives movement, engine and odometer from accepted fixes; the daemon wires its events to the outbox. retry: the agent's one backoff, for restarting the ignition's gpiomon.",
    ),
    layer(
      'platform-takes-config',
      'platform',
      ['config', 'fix', 'retry', 'system'],
      'platform/ talks HTTP to the platform; it knows nothing of the store or the uploader.',
    ),
    {
      name: 'transport-below-auth',
      comment:
        'platform/transport carries requests; auth, device and otm5 use it. The transport declares the small interface it needs (e.g. a redactor).',
      severity: 'error',
      from: { path: '^src/platform/transport/' },
      to: { path: '^src/platform/(auth|device|otm5)/|^src/platform/build\\.ts$' },
    },
    layer(
      'upload-takes-platform',
      'upload',
      ['config', 'fix', 'retry', 'system', 'platform'],
      'upload/ owns the queue interface the outbox implements; it never imports the store.',
    ),
    layer(
      'store-below-status',
      'store',
      ['config', 'fix', 'system', 'platform', 'upload'],
      'store/ is the one owner of the schema; it implements the interfaces of upload/ and platform/auth.',
    ),
    {
      name: 'sqlite-only-in-store',
      comment: 'SQL lives in store/: other folders ask store/ for records, never open or query the database.',
      severity: 'error',
      // KNOWN VIOLATION: system/instance-lock.ts takes its lock through a SQLite handle (the store's
      // rework moves it); delete the exception once it does.
      from: { path: '^src/', pathNot: ['^src/store/', '^src/system/instance-lock\\.ts$'] },
      to: { path: '^better-sqlite3$|node_modules/better-sqlite3/' },
    },
    layer(
      'socket-below-status',
      'socket',
      ['config', 'fix', 'system'],
      "socket/ is the local socket and its protocols; what goes over it (the status snapshot) is status/'s.",
    ),
    layer(
      'status-reads-components',
      'status',
      ['config', 'fix', 'retry', 'system', 'gnss', 'motion', 'platform', 'upload', 'store', 'socket'],
      'status/ reads the components; nothing but the commands, the daemon and the terminal reads status/.',
    ),
    layer(
      'fix-feed-reads-gnss-or-socket',
      'fix-feed',
      ['config', 'fix', 'system', 'gnss', 'socket'],
      'fix-feed/ gives `location here` fixes from the receiver or the daemon.',
    ),
    layer(
      'sites-below-commands',
      'sites',
      ['config', 'fix', 'retry', 'system', 'platform', 'fix-feed'],
      'sites/ validates and uploads OTM5 locations.',
    ),
    layer('terminal-renders-status', 'terminal', ['fix', 'status'], 'terminal/ renders for a terminal; it computes nothing.'),
    layer(
      'sim-stands-alone',
      'sim',
      ['system'],
      'sim/ is the platform simulator: a stand-in for the platform, sharing no code with the agent it tests.',
    ),
    {
      name: 'sim-only-for-commands',
      comment: 'Only the commands (sim, demo) start the simulator; the daemon never ships it into its own path.',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/(sim|cli|demo)/' },
      to: { path: '^src/sim/' },
    },
    {
      name: 'commands-on-top',
      comment:
        'cli/, doctor/, demo/, the composition root (agent.ts) and the daemon process around it (daemon.ts) are the top: nothing below imports them.',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/(cli|doctor|demo)/|^src/(agent|agent-options|daemon|daemon-v8)\\.ts$' },
      to: { path: '^src/(cli|doctor|demo)/|^src/(agent|agent-options|daemon|daemon-v8)\\.ts$' },
    },
    {
      name: 'cli-is-the-top',
      comment:
        'cli/ parses the command line and calls the rest; nothing imports it (the demo and the doctor are called by it). What two commands share goes below.',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/cli/' },
      to: { path: '^src/cli/' },
    },
    {
      name: 'no-tests-in-src',
      comment: 'The daemon ships no test code.',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '^(test|bench)/' },
    },
    {
      name: 'no-dev-dependencies-in-src',
      comment: 'dependencies lists what run and the CLI import; a gateway installs with --omit=dev.',
      severity: 'error',
      from: { path: '^src/' },
      to: { dependencyTypes: ['npm-dev'], dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'not-to-unresolvable',
      severity: 'error',
      from: { path: '^src/' },
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'] },
  },
};
