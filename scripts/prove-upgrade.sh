#!/usr/bin/env bash
# Proves that an upgrade from the fleet's apt repository loses nothing, and what a downgrade does,
# in a Debian 13 root of the architecture (under qemu-user for arm64 and armhf) with no network
# but loopback: the package installed with `apt-get install telematics-agent` from a signed
# repository (npm run repo), the service running against the platform simulator with a receiver
# on a pty, a platform outage holding a backlog; then a newer version published and installed with
# `apt-get upgrade` mid-drive, the outage lifted, and every fix must be delivered once, with no
# password grant after the upgrade, the token pair and the motion state kept. Then the same
# backwards (`apt-get install --allow-downgrades` of the previous version), and an older program
# started on a database of a newer schema must refuse with a sentence and leave the file as it was.
#
#   scripts/prove-upgrade.sh --arch arm64|armhf|amd64 [--deb FILE] [--minutes N]   (default: a 60-minute drive, fed at 5x)
#
# The newer version is FILE with its version raised (control and package.json), nothing else: the
# proof is of the package's upgrade path (maintainer scripts, apt, the data kept), not of a change
# in the program. A chroot has no systemd as PID 1: a stand-in `systemctl` (the real one diverted) starts
# the unit's own ExecStart, Environment and User and stops it as the unit does (SIGTERM, 30 s, then
# SIGKILL), so dpkg's maintainer scripts and deb-systemd-invoke run unchanged; the unit's sandbox,
# Restart= and watchdog are not exercised here (test/field/package-upgrade.test.ts runs an upgrade
# under a real systemd). Needs root, the root that scripts/prove-arch.sh makes (run it once for the
# architecture), gpg, apt-ftparchive and socat on the host. Prints the figures.
set -euo pipefail

ARCH='' DEB='' MINUTES=60
while [ $# -gt 0 ]; do
  case $1 in
    --arch) ARCH=${2-} && shift 2 ;;
    --deb) DEB=${2-} && shift 2 ;;
    --minutes) MINUTES=${2-} && shift 2 ;;
    -h | --help) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//' && exit 0 ;;
    *) echo "prove-upgrade: unknown argument $1 (see --help)" >&2 && exit 2 ;;
  esac
done
case $ARCH in arm64 | armhf | amd64) ;; *) echo "prove-upgrade: --arch must be arm64, armhf or amd64" >&2 && exit 2 ;; esac
[[ $MINUTES =~ ^[1-9][0-9]*$ ]] || { echo "prove-upgrade: --minutes must be a whole number" >&2 && exit 2; }

say() { printf 'prove-upgrade: %s\n' "$*"; }
die() {
  printf 'prove-upgrade: error: %s\n' "$*" >&2
  exit 1
}
[ "$(id -u)" -eq 0 ] || die "run as root (chroot, mounts, network namespace)"
for tool in unshare chroot socat gpg apt-ftparchive dpkg-deb; do command -v "$tool" >/dev/null || die "$tool not found (apt-get install util-linux socat gpg apt-utils dpkg)"; done

ROOT_DIR=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)
TARBALL=${PROVE_CACHE:-/var/tmp/telematics-agent-roots}/trixie-$ARCH.tar
[ -f "$TARBALL" ] || die "no Debian 13 $ARCH root at $TARBALL: run scripts/prove-arch.sh --arch $ARCH once (it makes it)"
if [ -z "$DEB" ]; then DEB=$(cd "$ROOT_DIR" && npm run --silent package -- --arch "$ARCH"); fi
[ -f "$DEB" ] || die "no package at $DEB"
[ "$(dpkg-deb -f "$DEB" Architecture)" = "$ARCH" ] || die "$DEB is for $(dpkg-deb -f "$DEB" Architecture), not $ARCH"

WORK=$(mktemp -d /var/tmp/telematics-agent-upgrade.XXXXXX)
cleanup() {
  gpgconf --homedir "$WORK/gpg" --kill all 2>/dev/null || true
  rm -rf --one-file-system -- "$WORK"
}
trap cleanup EXIT
R=$WORK/root
mkdir -p "$R" "$WORK/old" "$WORK/new"
tar -C "$R" -xf "$TARBALL"

# --- The two versions and the repository ---------------------------------------------------------
OLD_VERSION=$(dpkg-deb -f "$DEB" Version)
NEW_VERSION=$OLD_VERSION+upgrade1
cp "$DEB" "$WORK/old/telematics-agent_${OLD_VERSION}_$ARCH.deb"
dpkg-deb -R "$DEB" "$WORK/tree"
sed -i "s/^Version: .*/Version: $NEW_VERSION/" "$WORK/tree/DEBIAN/control"
# The program says its version from package.json (status shows it): the new one must say so.
node -e 'const f = process.argv[1], p = JSON.parse(require("fs").readFileSync(f, "utf8")); p.version = process.argv[2];
  require("fs").writeFileSync(f, JSON.stringify(p, null, 2) + "\n")' "$WORK/tree/opt/telematics-agent/package.json" "$NEW_VERSION"
dpkg-deb --root-owner-group -Zxz --build "$WORK/tree" "$WORK/new/telematics-agent_${NEW_VERSION}_$ARCH.deb" >/dev/null
rm -rf "$WORK/tree"

export GNUPGHOME=$WORK/gpg
mkdir -m 0700 "$GNUPGHOME"
gpg --batch --passphrase '' --quick-gen-key 'Upgrade proof archive <archive@upgrade-proof.invalid>' default default never 2>/dev/null
FPR=$(gpg --batch --with-colons --list-secret-keys | awk -F: '$1 == "fpr" { print $10; exit }')
t0=$(date +%s.%N)
bash "$ROOT_DIR/scripts/apt-repo.sh" --key "$FPR" --from "$WORK/old" --out "$R/srv/apt" >/dev/null
REPO_SECONDS=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
install -D -m 0644 "$R/srv/apt/fleet-archive-key.asc" "$R/etc/apt/keyrings/telematics-agent.asc"
# The gateway knows this repository only: Debian's own sources are removed, and the namespace has
# no network besides.
rm -f "$R/etc/apt/sources.list" "$R"/etc/apt/sources.list.d/*
cat >"$R/etc/apt/sources.list.d/telematics-agent.sources" <<'SOURCES'
Types: deb
URIs: file:/srv/apt
Suites: stable
Components: main
Signed-By: /etc/apt/keyrings/telematics-agent.asc
SOURCES

# --- The stand-in systemctl ----------------------------------------------------------------------
# dpkg runs maintainer scripts with a PATH of its own: the stand-in takes systemctl's place, the
# real one diverted aside as an administrator would (dpkg-divert).
chroot "$R" dpkg-divert --quiet --local --rename --divert /usr/bin/systemctl.real --add /usr/bin/systemctl
install -m 0755 /dev/stdin "$R/usr/bin/systemctl" <<'SYSTEMCTL'
#!/bin/sh
# Stand-in for systemctl in a chroot without systemd (scripts/prove-upgrade.sh): the one unit only.
UNIT_FILE=/usr/lib/systemd/system/telematics-agent.service
PIDFILE=/run/ta-service.pid
EVENTS=/run/ta-service.events
echo "systemctl $* $(date +%s.%N)" >>/run/ta-service.calls
verb=''
for a in "$@"; do case $a in -*) ;; *) [ -n "$verb" ] || verb=$a ;; esac; done
running() { [ -f "$PIDFILE" ] && kill -0 "$(cat "$PIDFILE")" 2>/dev/null; }
stamp() { echo "$1 $(date +%s.%N)" >>"$EVENTS"; }
start() {
  running && return 0
  user=$(sed -n 's/^User=//p' "$UNIT_FILE")
  # LoadCredential=password:/etc/telematics-agent/password, StateDirectory and RuntimeDirectory.
  install -d -m 0700 -o "$user" /run/credentials/telematics-agent.service
  install -m 0400 -o "$user" /etc/telematics-agent/password /run/credentials/telematics-agent.service/password
  install -d -m 0750 -o "$user" -g "$user" /run/telematics-agent
  install -d -m 0700 -o "$user" -g "$user" /var/lib/telematics-agent
  exec_start=$(sed -n 's/^ExecStart=//p' "$UNIT_FILE")
  env_lines=$(sed -n 's/^Environment=//p' "$UNIT_FILE" | tr '\n' ' ')
  # shellcheck disable=SC2086 # the unit's command line and environment, split as systemd splits them
  setsid setpriv --reuid="$user" --regid="$user" --init-groups \
    env -i PATH=/usr/bin:/bin $env_lines CREDENTIALS_DIRECTORY=/run/credentials/telematics-agent.service \
    $exec_start </dev/null >>/var/log/telematics-agent.log 2>&1 &
  echo $! >"$PIDFILE"
  stamp started
}
stop() {
  running || return 0
  pid=$(cat "$PIDFILE")
  stamp stopping
  kill -TERM "$pid"
  # TimeoutStopSec=30s, then SIGKILL, as the unit.
  i=0
  while kill -0 "$pid" 2>/dev/null && [ $i -lt 300 ]; do sleep 0.1 && i=$((i + 1)); done
  if kill -0 "$pid" 2>/dev/null; then kill -KILL "$pid" && stamp killed; fi
  rm -f "$PIDFILE"
  stamp stopped
}
case $verb in
  start) start ;;
  stop) stop ;;
  restart) stop && start ;;
  is-active) running ;;
  # The real one asks the bus once /run/systemd/system is there: read the link preset made.
  is-enabled) if [ -L /etc/systemd/system/multi-user.target.wants/telematics-agent.service ]; then echo enabled; else echo disabled && exit 1; fi ;;
  # preset and enable work on the files; daemon-reload fails as it would without a bus.
  *) exec /usr/bin/systemctl.real "$@" ;;
esac
SYSTEMCTL

# --- The receiver, the platform ------------------------------------------------------------------
node "$ROOT_DIR/dist/cli/main.js" drive -o "$WORK/drive.nmea" -m "$MINUTES" >/dev/null
# One epoch (the lines sharing a time) every 200 ms: 5x real time, then the port stays open.
cat >"$WORK/feed.mjs" <<'FEED'
import { readFileSync } from 'node:fs';
const groups = [];
let last;
for (const line of readFileSync(process.argv[2], 'utf8').split(/\r?\n/)) {
  if (!line) continue;
  const t = /^\$..(?:RMC|GGA|GLL|ZDA),(\d{6})/.exec(line)?.[1];
  if (!groups.length || (t && last && t !== last)) groups.push('');
  if (t) last = t;
  groups[groups.length - 1] += line + '\r\n';
}
let i = 0;
setInterval(() => i < groups.length && process.stdout.write(groups[i++]), 200);
FEED
PASSWORD=upgrade-Proof-$RANDOM$RANDOM

cat >"$WORK/inside.sh" <<'INSIDE'
set -euo pipefail
R=$1 WORK=$2 ROOT_DIR=$3 PASSWORD=$4 OLD_VERSION=$5 NEW_VERSION=$6 FPR=$7 ARCH=$8
CLI=$ROOT_DIR/dist/cli/main.js
ip link set lo up
mount -t proc proc "$R/proc"
# A /dev of the root's own (the receiver's link must be under /dev, and not in the host's): the
# few nodes a chroot needs, bound from the host, and the host's ptys (socat's is one).
mount -t tmpfs -o mode=0755 tmpfs "$R/dev"
for node in null zero full random urandom tty; do touch "$R/dev/$node" && mount --bind "/dev/$node" "$R/dev/$node"; done
mkdir "$R/dev/pts" "$R/dev/shm" && mount --bind /dev/pts "$R/dev/pts" && mount -t tmpfs tmpfs "$R/dev/shm"
ln -s pts/ptmx "$R/dev/ptmx"
mount -t tmpfs tmpfs "$R/run"
mkdir -p "$R/run/systemd/system"
in_root() { chroot "$R" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive "$@"; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }
fail() { echo "FAIL $*"; tail -20 "$R/var/log/telematics-agent.log" 2>/dev/null || true; exit 1; }
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true; in_root systemctl stop telematics-agent.service || true' EXIT

# The platform simulator (the checkout's, native) on loopback: the only platform there is.
node "$CLI" sim --json --user gateway --password "$PASSWORD" >"$WORK/sim.json" 2>"$WORK/sim.log" &
pids+=($!)
for _ in $(seq 100); do [ -s "$WORK/sim.json" ] && break; sleep 0.2; done
urls=$(head -1 "$WORK/sim.json")
url() { node -e 'console.log(JSON.parse(process.argv[1])[process.argv[2]])' "$urls" "$1"; }
ADMIN=$(url adminUrl)
admin() { node -e 'fetch(process.argv[1], process.argv[2] ? { method: process.argv[2], body: process.argv[3] } : undefined).then((r) => r.text()).then(console.log)' "$ADMIN/$1" "${2-}" "${3-}"; }
stat_of() { admin stats | node -e 'let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => console.log(JSON.parse(s)[process.argv[1]]))' "$1"; }
# The receiver on a pty that outlives the daemons: the drive goes on through the upgrade.
socat EXEC:"node $WORK/feed.mjs $WORK/drive.nmea" "PTY,link=$R/dev/ttyGNSS0,raw,echo=0,perm=0666" &
pids+=($!)
for _ in $(seq 50); do [ -e "$R/dev/ttyGNSS0" ] && break; sleep 0.1; done

# The status as the host's CLI reads it: the socket and the database inside the root.
cat >"$WORK/view.json" <<JSON
{"platform":{"authUrl":"$(url authUrl)","deviceUrl":"$(url deviceUrl)","planningUrl":"$(url planningUrl)"},
 "credentials":{"username":"gateway","passwordFile":"$WORK/password"},"device":{"externalSystemId":"upgrade-fleet","carrierCode":"SIM","externalDeviceId":"upgrade-gw-1"},
 "gnss":{"path":"/dev/ttyGNSS0"},"dataDir":"$R/var/lib/telematics-agent","status":{"socketPath":"$R/run/telematics-agent/status.sock"}}
JSON
printf '%s\n' "$PASSWORD" >"$WORK/password" && chmod 0600 "$WORK/password"
status() { node "$CLI" status --json --config "$WORK/view.json" 2>/dev/null || true; }
field() { status | node -e 'let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => { try { let v = JSON.parse(s); for (const k of process.argv[1].split(".")) v = v?.[k]; console.log(v ?? "") } catch { console.log("") } })' "$1"; }
wait_for() { # what, seconds, a shell condition
  local deadline=$(($(date +%s) + $2))
  until eval "$3"; do [ "$(date +%s)" -lt "$deadline" ] || fail "timed out after $2 s waiting for $1"; sleep 1; done
}

# --- Install from the repository, configure, start -----------------------------------------------
t0=$(date +%s.%N)
in_root apt-get update -q >"$WORK/apt-update.log" 2>&1 || { cat "$WORK/apt-update.log"; fail "apt-get update"; }
in_root apt-get install -y -q telematics-agent >"$WORK/apt-install.log" 2>&1 || { cat "$WORK/apt-install.log"; fail "apt-get install"; }
echo "INSTALL_SECONDS $(secs "$t0" "$(date +%s.%N)")"
[ "$(in_root dpkg-query -W -f '${Version}' telematics-agent)" = "$OLD_VERSION" ] || fail "installed version"
install -m 0600 "$WORK/password" "$R/etc/telematics-agent/password"
cat >"$R/etc/telematics-agent/config.json" <<JSON
{"environment":"staging","platform":{"authUrl":"$(url authUrl)","deviceUrl":"$(url deviceUrl)","planningUrl":"$(url planningUrl)","startupJitterS":0},
 "credentials":{"username":"gateway"},"device":{"externalSystemId":"upgrade-fleet","carrierCode":"SIM","externalDeviceId":"upgrade-gw-1"},
 "gnss":{"path":"/dev/ttyGNSS0"},"dataDir":"/var/lib/telematics-agent","recording":{"mode":"all"},"storage":{"commitIntervalMs":500}}
JSON
chmod 0640 "$R/etc/telematics-agent/config.json" && chroot "$R" chgrp telematics-agent /etc/telematics-agent/config.json
in_root systemctl start telematics-agent.service
wait_for "a first delivery" 300 '[ "$(field outbox.sentTotal)" -gt 0 ] 2>/dev/null'
admin faults POST '{"events":{"status503Rate":1}}' >/dev/null
wait_for "a backlog of 50 fixes" 300 '[ "$(field outbox.pending)" -ge 50 ] 2>/dev/null'
grants_before=$(stat_of passwordGrants)
odometer_before=$(field motion.odometerM)

# --- A newer version published and installed with apt-get upgrade, the service running ----------
phase() { # name, the version to install, the apt command
  local name=$1 version=$2
  shift 2
  [ "$(field source)" = daemon ] || fail "the service is not running before the $name"
  : >"$R/run/ta-service.events"
  local t0
  t0=$(date +%s.%N)
  in_root "$@" >"$WORK/apt-$name.log" 2>&1 || { cat "$WORK/apt-$name.log"; fail "apt-get ($name)"; }
  echo "${name^^}_SECONDS $(secs "$t0" "$(date +%s.%N)")"
  [ "$(in_root dpkg-query -W -f '${Version} ${Status}' telematics-agent)" = "$version install ok installed" ] || fail "version after the $name"
  # Stopped before the unpack, started after it: the stand-in's stamps and dpkg's log, in order.
  grep -q '^stopping ' "$R/run/ta-service.events" && grep -q '^started ' "$R/run/ta-service.events" ||
    { cat "$WORK/apt-$name.log" "$R/run/ta-service.calls"; fail "the service was not stopped and started by the $name"; }
  ! grep -q '^killed' "$R/run/ta-service.events" || fail "the old daemon did not stop within 30 s"
  local stopping started
  stopping=$(awk '$1 == "stopping" { print $2; exit }' "$R/run/ta-service.events")
  started=$(awk '$1 == "started" { print $2 }' "$R/run/ta-service.events" | tail -1)
  echo "${name^^}_DOWN_SECONDS $(secs "$stopping" "$started")"
  local held
  held=$(node -e 'const D = require(process.argv[1]); const d = new D(process.argv[2], { readonly: true });
    console.log(d.prepare("SELECT count(*) AS n FROM outbox").get().n)' "$ROOT_DIR/node_modules/better-sqlite3" "$R/var/lib/telematics-agent/agent.db")
  echo "${name^^}_HELD $held"
  wait_for "the $name's daemon" 300 '[ "$(field daemon.version)" = "$version" ]'
  awk -v a="$(field motion.odometerM)" -v b="$odometer_before" 'BEGIN { exit !(a + 0 >= b + 0 && b + 0 > 0) }' || fail "the odometer went back after the $name"
  grep -q '"msg":"agent stopped"' "$R/var/log/telematics-agent.log" || fail "the old daemon did not stop cleanly"
}
bash "$ROOT_DIR/scripts/apt-repo.sh" --key "$FPR" --from "$WORK/new" --out "$R/srv/apt" >/dev/null
in_root apt-get update -q >>"$WORK/apt-update.log" 2>&1 || fail "apt-get update (the newer version)"
# The token pair's generation grows with every rotation (a refresh or a grant).
token_generation() {
  node -e 'const D = require(process.argv[1]); const d = new D(process.argv[2], { readonly: true });
    console.log(d.prepare("SELECT generation FROM token_pair").get()?.generation ?? "none")' "$ROOT_DIR/node_modules/better-sqlite3" "$R/var/lib/telematics-agent/agent.db"
}
token_before=$(token_generation)
phase upgrade "$NEW_VERSION" apt-get upgrade -y -q
admin faults DELETE >/dev/null
wait_for "the backlog delivered" 900 '[ "$(field outbox.pending)" = 0 ] && [ "$(field source)" = daemon ]'
echo "UPGRADE_GRANTS_AFTER $(($(stat_of passwordGrants) - grants_before))"
echo "TOKEN_GENERATION before the upgrade $token_before, after the backlog $(token_generation) (refreshes in all $(stat_of refreshes))"
echo "ODOMETER_M before $odometer_before after $(field motion.odometerM)"

# --- Back to the previous version, with a backlog again -----------------------------------------
admin faults POST '{"events":{"status503Rate":1}}' >/dev/null
held=$(field outbox.pending)
wait_for "a backlog of 50 fixes" 300 "[ \"\$(field outbox.pending)\" -ge $((held + 50)) ] 2>/dev/null"
phase downgrade "$OLD_VERSION" apt-get install -y -q --allow-downgrades "telematics-agent=$OLD_VERSION"
admin faults DELETE >/dev/null
wait_for "the backlog delivered" 900 '[ "$(field outbox.pending)" = 0 ] && [ "$(field source)" = daemon ]'
echo "DOWNGRADE_GRANTS_AFTER $(($(stat_of passwordGrants) - grants_before))"

# --- A database of a newer schema, opened by this (older) program --------------------------------
in_root systemctl stop telematics-agent.service
DB=$R/var/lib/telematics-agent/agent.db
schema=$(node -e 'const D = require(process.argv[1]); const d = new D(process.argv[2]); const v = d.pragma("user_version", { simple: true }); d.pragma(`user_version = ${v + 1}`); d.close(); console.log(v)' "$ROOT_DIR/node_modules/better-sqlite3" "$DB")
before=$(sha256sum "$DB" | cut -d' ' -f1)
refusal=$(in_root setpriv --reuid=telematics-agent --regid=telematics-agent --init-groups env CREDENTIALS_DIRECTORY=/run/credentials/telematics-agent.service \
  /usr/bin/node /opt/telematics-agent/dist/cli/main.js run --config /etc/telematics-agent/config.json 2>&1 >/dev/null | tail -1) && fail "the daemon ran on a newer schema"
[ "$(sha256sum "$DB" | cut -d' ' -f1)" = "$before" ] || fail "the database changed"
echo "NEWER_SCHEMA_REFUSAL $refusal"
node -e 'const D = require(process.argv[1]); const d = new D(process.argv[2]); d.pragma(`user_version = ${process.argv[3]}`); d.close()' "$ROOT_DIR/node_modules/better-sqlite3" "$DB" "$schema"

echo "DUPLICATES $(stat_of duplicates)"
echo "DELIVERED $(admin "events?type=all" | node -e 'let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => console.log(JSON.parse(s).length))')"
echo "SENT_TOTAL $(field outbox.sentTotal) THINNED $(field outbox.thinned) DEAD $(field outbox.deadLetters) PENDING $(field outbox.pending)"
echo "PASS_INSIDE"
INSIDE

status=0
unshare --mount --net --propagation private -- bash "$WORK/inside.sh" "$R" "$WORK" "$ROOT_DIR" "$PASSWORD" "$OLD_VERSION" "$NEW_VERSION" "$FPR" "$ARCH" 2>&1 | tee "$WORK/inside.log" || status=$?
v() { awk -v k="$1" '$1 == k { $1 = ""; sub(/^ /, ""); print; exit }' "$WORK/inside.log"; }
grep -q '^PASS_INSIDE' "$WORK/inside.log" || status=1
[ "$(v DUPLICATES)" = 0 ] || status=1
[ "$(v UPGRADE_GRANTS_AFTER)" = 0 ] && [ "$(v DOWNGRADE_GRANTS_AFTER)" = 0 ] || status=1
sent=$(v SENT_TOTAL | awk '{ print $1 }')
[ -n "$sent" ] && [ "$sent" = "$(v DELIVERED)" ] || status=1
say "figures ($ARCH, Debian 13, $([ "$ARCH" = amd64 ] && echo 'no emulation' || echo 'under qemu-user'), $OLD_VERSION -> $NEW_VERSION -> $OLD_VERSION):"
say "  repository made (npm run repo, one package): $REPO_SECONDS s"
say "  apt-get update && apt-get install telematics-agent (no network): $(v INSTALL_SECONDS) s"
say "  apt-get upgrade with the service running: $(v UPGRADE_SECONDS) s; the service down $(v UPGRADE_DOWN_SECONDS) s; fixes held (counted as apt-get returned, the outage on) $(v UPGRADE_HELD)"
say "  apt-get install --allow-downgrades (the previous version): $(v DOWNGRADE_SECONDS) s; down $(v DOWNGRADE_DOWN_SECONDS) s; held $(v DOWNGRADE_HELD)"
say "  delivered $(v DELIVERED) events, the daemons sent $(v SENT_TOTAL); duplicates $(v DUPLICATES)"
say "  password grants after the upgrade $(v UPGRADE_GRANTS_AFTER), after the downgrade $(v DOWNGRADE_GRANTS_AFTER); token $(v TOKEN_GENERATION)"
say "  odometer (motion state) $(v ODOMETER_M)"
say "  a newer schema under the older program: $(v NEWER_SCHEMA_REFUSAL) (the file unchanged)"
[ "$status" -eq 0 ] || die "the upgrade or the downgrade lost or repeated something, or did not do what it should (above)"
say "PASS: installed and upgraded from the signed repository with nothing else reachable; every fix delivered once across the upgrade and the downgrade, no new password grant"
