#!/usr/bin/env bash
# Installs, upgrades or removes telematics-agent on a gateway (Debian / Raspberry Pi OS with
# systemd and Node.js). Run `scripts/provision.sh --help` for the flags.
# shellcheck source-path=SCRIPTDIR
set -euo pipefail
shopt -s nullglob
# Program files must stay readable by the service user whatever root's umask is; files holding
# secrets are created with explicit modes below.
umask 022

readonly SERVICE_USER=telematics-agent
readonly UNIT_NAME=telematics-agent.service
readonly APP=/opt/telematics-agent
readonly ETC=/etc/telematics-agent
readonly STATE=/var/lib/telematics-agent
readonly UNIT_FILE=/etc/systemd/system/$UNIT_NAME
readonly DROPIN_DIR=/etc/systemd/system/$UNIT_NAME.d
readonly SYSUSERS_FILE=/etc/sysusers.d/telematics-agent.conf
readonly MODULES_FILE=/etc/modules-load.d/telematics-agent.conf
readonly TMPFILES_FILE=/etc/tmpfiles.d/telematics-agent.conf
readonly CLI=/usr/local/bin/telematics-agent

SCRIPT_DIR=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
readonly SCRIPT_DIR HELPERS=$SCRIPT_DIR/provision

usage() {
  cat <<EOF
Usage: provision.sh [FLAGS]               install, or upgrade in place
       provision.sh --uninstall [--purge]  remove the service and the program

Installs telematics-agent into $APP, writes $ETC/config.json, stores the
platform password for systemd's LoadCredential=, and starts $UNIT_NAME.

Configuration (required on a first install; later runs keep the existing configuration and
change only the keys given here):
  --environment production|staging   platform environment (default on a first install: production)
  --username NAME                    platform user name
  --password-file FILE|-             file holding the password ("-" reads standard input);
                                     without it: the stored password, or a prompt with no echo
  --external-system-id ID            device.externalSystemId
  --carrier-code CODE                device.carrierCode
  --device-url URL                   tracking device service base, ends in /api/public/v2/
  --license-plate PLATE              device.licensePlate (optional)
  --driver-name NAME                 device.driverName (optional)
  --auth-url URL                     platform.authUrl, token service base ending in /api/v1
                                     (default: the environment's address)
  --planning-url URL                 platform.planningUrl, planning host (default: the environment's)
  --ca-file FILE                     extra CA certificate (PEM) for a private platform setup: copied to
                                     $ETC/ca.pem and set as platform.caFile
  --gnss-path DEVICE|auto            receiver port; without it (first install) or with "auto",
                                     listens for NMEA on /dev/ttyACM*, /dev/ttyUSB*, /dev/serial0
  --baud-rate N                      receiver baud rate (auto-detected with the port)
  --gnss-source serial|gpsd          read the port (serial) or gpsd, which shares the receiver with
                                     chrony and its tools; default on a first install: gpsd when
                                     gpsd.socket or gpsd.service is active, else serial. With gpsd
                                     the unit gets no serial devices and no dialout group
  --gpsd HOST:PORT                   gpsd's address (default 127.0.0.1:2947; implies gpsd)

Exit codes: 0 done, 1 failed (see the message), 2 a wrong or missing flag or a configuration the
agent refuses (nothing was changed). A run that fails before the configuration check passed (no
password, no receiver found, npm failed) changes nothing either; the lock is removed on every exit.

Installation:
  --package FILE        install from telematics-agent_<version>_<arch>.deb (npm run package):
                        dpkg -i, no network, no compiler; the image's or this machine's
                        architecture must be the package's
  --arch ARCH           with --root: the image's architecture (arm64, armhf, amd64); default:
                        read from the image's own programs
  --source DIR          built checkout to install (default: $(dirname -- "$SCRIPT_DIR"))
  --node PATH           node binary for the service (default: \`command -v node\`)
  --probe-seconds N     listening time per port and baud rate when detecting (default 3)
  --wait-timeout N      seconds to wait for the device to register (default 180; 0: do not wait)
  --root DIR            install into DIR as into an image: no systemctl start, no host users;
                        writes DIR/provision-manifest.tsv with the owners a real install sets
  --uninstall           stop and remove the service and $APP; keeps the data
                        ($STATE) and the configuration ($ETC)
  --purge               with --uninstall: also remove the data, the configuration and the user
EOF
}

say() { printf 'provision: %s\n' "$*"; }
warn() { printf 'provision: warning: %s\n' "$*" >&2; }
die() {
  printf 'provision: error: %s\n' "$*" >&2
  exit 1
}
# A wrong or missing flag, or a configuration the agent refuses: exit 2, as the agent's own CLI does.
usage_error() {
  printf 'provision: error: %s\n' "$*" >&2
  exit 2
}

# --- Flags ---------------------------------------------------------------------------------------
ROOT='' SOURCE='' NODE='' PACKAGE_FILE='' TARGET_ARCH='' PACKAGE_ARCH='' UNINSTALL=0 PURGE=0 PROBE_SECONDS=3 WAIT_TIMEOUT=180
ENVIRONMENT='' USERNAME='' PASSWORD_FILE='' EXTERNAL_SYSTEM_ID='' CARRIER_CODE='' DEVICE_URL=''
GNSS_SOURCE='' GPSD_ADDRESS='' LICENSE_PLATE='' GNSS_PATH='' BAUD_RATE='' DRIVER_NAME='' AUTH_URL='' PLANNING_URL='' CA_FILE=''

parse_flags() {
  local flag value var inline
  while [ $# -gt 0 ]; do
    flag=$1 inline=0
    case $flag in
      -h | --help) usage && exit 0 ;;
      --uninstall) UNINSTALL=1 && shift && continue ;;
      --purge) PURGE=1 && shift && continue ;;
      --*=*) value=${flag#*=} flag=${flag%%=*} inline=1 ;;
      --*) value=${2-} ;;
      *) usage_error "unexpected argument \"$flag\" (see --help)" ;;
    esac
    case $flag in
      --environment) var=ENVIRONMENT ;;
      --username) var=USERNAME ;;
      --password-file) var=PASSWORD_FILE ;;
      --external-system-id) var=EXTERNAL_SYSTEM_ID ;;
      --carrier-code) var=CARRIER_CODE ;;
      --device-url) var=DEVICE_URL ;;
      --license-plate) var=LICENSE_PLATE ;;
      --driver-name) var=DRIVER_NAME ;;
      --auth-url) var=AUTH_URL ;;
      --planning-url) var=PLANNING_URL ;;
      --ca-file) var=CA_FILE ;;
      --gnss-path) var=GNSS_PATH ;;
      --gnss-source) var=GNSS_SOURCE ;;
      --gpsd) var=GPSD_ADDRESS ;;
      --baud-rate) var=BAUD_RATE ;;
      --source) var=SOURCE ;;
      --node) var=NODE ;;
      --probe-seconds) var=PROBE_SECONDS ;;
      --wait-timeout) var=WAIT_TIMEOUT ;;
      --root) var=ROOT ;;
      --package) var=PACKAGE_FILE ;;
      --arch) var=TARGET_ARCH ;;
      *) usage_error "unknown flag $flag (see --help)" ;;
    esac
    if [ "$inline" -eq 1 ]; then
      shift
    else
      [ $# -ge 2 ] || usage_error "$flag needs a value (see --help)"
      shift 2
    fi
    printf -v "$var" '%s' "$value"
  done
  case $ENVIRONMENT in '' | production | staging) ;; *) usage_error "--environment must be production or staging, got \"$ENVIRONMENT\"" ;; esac
  [[ $PROBE_SECONDS =~ ^[1-9][0-9]*$ ]] || usage_error "--probe-seconds must be a whole number of seconds"
  [[ $WAIT_TIMEOUT =~ ^[0-9]+$ ]] || usage_error "--wait-timeout must be a whole number of seconds"
  [ -z "$BAUD_RATE" ] || [[ $BAUD_RATE =~ ^[0-9]+$ ]] || usage_error "--baud-rate must be a number, e.g. 9600"
  # The config schema's gnss.path pattern: the path ends up in a systemd drop-in, where a newline
  # or a space would add directives of its own.
  case $GNSS_SOURCE in '' | serial | gpsd) ;; *) usage_error "--gnss-source must be serial or gpsd, got \"$GNSS_SOURCE\"" ;; esac
  [ -z "$GPSD_ADDRESS" ] || [[ $GPSD_ADDRESS =~ ^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)(:[0-9]{1,5})?$ ]] ||
    usage_error "--gpsd must be HOST:PORT, e.g. 127.0.0.1:2947"
  [ -z "$GPSD_ADDRESS" ] || [ "$GNSS_SOURCE" != serial ] || usage_error "--gpsd goes with --gnss-source gpsd, not serial"
  { [ -z "$GPSD_ADDRESS" ] && [ "$GNSS_SOURCE" != gpsd ]; } || { [ -z "$GNSS_PATH" ] && [ -z "$BAUD_RATE" ]; } ||
    usage_error "--gnss-path and --baud-rate are for the serial source; with gpsd, gpsd owns the port (set DEVICES= in /etc/default/gpsd)"
  [ -z "$GNSS_PATH" ] || [ "$GNSS_PATH" = auto ] || gnss_path_ok "$GNSS_PATH" ||
    usage_error "--gnss-path must be a device path under /dev (letters, digits and . _ / : -), e.g. /dev/ttyACM0, or auto"
  [ "$PURGE" -eq 0 ] || [ "$UNINSTALL" -eq 1 ] || usage_error "--purge goes with --uninstall"
  case $TARGET_ARCH in '' | arm64 | armhf | amd64) ;; *) usage_error "--arch must be arm64, armhf or amd64, got \"$TARGET_ARCH\"" ;; esac
  [ -z "$PACKAGE_FILE" ] || [ -z "$SOURCE" ] || usage_error "--package and --source exclude each other"
  [ -z "$CA_FILE" ] || [ -r "$CA_FILE" ] || usage_error "--ca-file $CA_FILE: cannot read it"
  [ -z "$CA_FILE" ] || grep -q -- '-----BEGIN CERTIFICATE-----' "$CA_FILE" || usage_error "--ca-file $CA_FILE holds no PEM certificate (-----BEGIN CERTIFICATE-----)"
}

# --- Effects on the system, or a record of them under --root --------------------------------------
# Under --root nothing outside DIR changes: ownership that needs the service user (which exists
# only on the target) is written to the manifest instead, modes are applied for real.
# The manifest is written to a temporary file and put in place only when the run succeeds, so a
# failed run leaves the previous one's manifest (or none) as it was.
MANIFEST='' MANIFEST_FINAL='' APP_DIR=''

record() {
  [ -n "$MANIFEST" ] || return 0
  local IFS=$'\t'
  printf '%s\n' "$*" >>"$MANIFEST"
}

# place TARGET_PATH MODE OWNER GROUP: the final mode and owner of a file or directory.
place() {
  local target=$1 mode=$2 owner=$3 group=$4 kind=file
  [ -d "$ROOT$target" ] && kind=dir
  chmod "$mode" "$ROOT$target"
  if [ -z "$ROOT" ]; then chown "$owner:$group" "$ROOT$target"; fi
  record "$kind" "$target" "$mode" "$owner:$group"
}

# An atomic replace whose result survives a power cut: rename, then flush file and directory.
commit_file() {
  local tmp=$1 final=$2
  sync -- "$tmp"
  mv -f -- "$tmp" "$final"
  sync -- "$(dirname -- "$final")"
}

# --- What a failed run takes back ---------------------------------------------------------------
# Help promises that a refused run changes nothing. Until the configuration is committed
# (COMMITTED=1), every write goes to a staging place (STAGE, or a ".new" beside its target) and
# every directory the run had to create is remembered here, so that a failure removes them again.
CREATED_DIRS=() STAGE='' COMMITTED=0 LOCK_FILE='' LOCK_DIR_CREATED=0

# make_dir DIR: mkdir -p that remembers which directories did not exist before (outermost first).
make_dir() {
  local dir=$1 up
  local -a missing=()
  while [ ! -e "$dir" ]; do
    missing=("$dir" "${missing[@]}")
    up=$(dirname -- "$dir")
    [ "$up" != "$dir" ] || break
    dir=$up
  done
  [ "${#missing[@]}" -gt 0 ] || return 0
  mkdir -p -- "${missing[-1]}"
  CREATED_DIRS+=("${missing[@]}")
}

# Removes the directories this run created, innermost first, where they are empty again.
remove_created_dirs() {
  local i
  for ((i = ${#CREATED_DIRS[@]} - 1; i >= 0; i--)); do
    rmdir -- "${CREATED_DIRS[i]}" 2>/dev/null || true
  done
}

# The lock is taken on an open file and the file removed on every exit. A second run that opened
# the file just before it was removed would lock an unlinked inode: it checks that the path still
# names the file it locked, else another run holds (or is about to hold) the real lock.
take_lock() {
  LOCK_FILE=$ROOT/run/telematics-agent-provision.lock
  if [ ! -d "$ROOT/run" ]; then
    mkdir -p -- "$ROOT/run"
    LOCK_DIR_CREATED=1
  fi
  exec 9>>"$LOCK_FILE"
  if ! flock -n 9 || [ "$(stat -L -c %d:%i -- "/proc/$$/fd/9")" != "$(stat -c %d:%i -- "$LOCK_FILE" 2>/dev/null)" ]; then
    LOCK_FILE=''
    die "another provisioning run is in progress"
  fi
}

release_lock() {
  [ -n "$LOCK_FILE" ] || return 0
  rm -f -- "$LOCK_FILE"
  exec 9>&-
  LOCK_FILE=''
  if [ "$LOCK_DIR_CREATED" -eq 1 ]; then rmdir -- "$ROOT/run" 2>/dev/null || true; fi
}

# shellcheck source=provision/lib-app.sh
source "$HELPERS/lib-app.sh"
# shellcheck source=provision/lib-gnss.sh
source "$HELPERS/lib-gnss.sh"
# shellcheck source=provision/lib-config.sh
source "$HELPERS/lib-config.sh"
# shellcheck source=provision/lib-service.sh
source "$HELPERS/lib-service.sh"
# shellcheck source=provision/lib-package.sh
source "$HELPERS/lib-package.sh"

# --- Checks before anything changes -------------------------------------------------------------
preflight() {
  trap on_exit EXIT
  if [ -n "$ROOT" ]; then
    ROOT=$(realpath -m -- "$ROOT")
    make_dir "$ROOT"
    [ "$ROOT" != / ] || ROOT=''
  fi
  if [ -z "$ROOT" ]; then
    [ "$(id -u)" -eq 0 ] || die "run as root (sudo $0 ...), or pass --root DIR to install into a directory"
    [ -d /run/systemd/system ] || die "systemd is not running on this machine; pass --root DIR to prepare an image instead"
  fi
  APP_DIR=$ROOT$APP
  take_lock
  STAGE=$(mktemp -d "${TMPDIR:-/tmp}/telematics-agent-provision.XXXXXX")
  if [ -n "$ROOT" ]; then
    MANIFEST_FINAL=$ROOT/provision-manifest.tsv
    MANIFEST=$STAGE/provision-manifest.tsv
    : >"$MANIFEST"
  fi
  [ "$UNINSTALL" -eq 1 ] && return 0

  if [ -n "$PACKAGE_FILE" ]; then
    package_preflight
    # The package's unit runs Debian's node; the configuration tools run this machine's.
    [ -n "$NODE" ] || [ -n "$ROOT" ] || NODE=/usr/bin/node
  fi
  SOURCE=${SOURCE:-$(dirname -- "$SCRIPT_DIR")}
  SOURCE=$(cd -- "$SOURCE" 2>/dev/null && pwd) || usage_error "--source: no such directory"
  # Run from an installed package (/opt/telematics-agent/scripts/provision.sh): configure only.
  if [ -z "$PACKAGE_MODE" ] && [ "$SOURCE" = "$APP_DIR" ] && [ -f "$SOURCE/node-abi" ] && [ -f "$ROOT/var/lib/dpkg/info/telematics-agent.list" ]; then
    PACKAGE_MODE=installed
    [ -n "$NODE" ] || NODE=/usr/bin/node
  fi
  [ -f "$SOURCE/package.json" ] || die "$SOURCE has no package.json; pass --source DIR (a built checkout or an unpacked release)"
  [ -f "$SOURCE/systemd/$UNIT_NAME" ] || die "$SOURCE has no systemd/$UNIT_NAME; pass --source DIR (a built checkout or an unpacked release)"
  [ -f "$SOURCE/dist/cli/main.js" ] || die "$SOURCE has no dist/: build it first (npm ci && npm run build), or use a release tarball (npm pack)"

  NODE=${NODE:-$(command -v node || true)}
  [ -n "$NODE" ] || die "node not found; install Node.js 20.19 or later (Debian 13: apt-get install nodejs; Debian 12: NodeSource's; docs/installing.md, "Which Node")"
  [[ $NODE =~ ^/[A-Za-z0-9._/+-]+$ ]] || usage_error "--node must be an absolute path without spaces, got \"$NODE\""
  [ -x "$NODE" ] || die "$NODE is not executable"
  # The unit has ProtectHome=yes and PrivateTmp=yes: a node under /root or /home (nvm), /tmp or
  # /var/tmp is invisible to the service.
  case "$NODE $(readlink -f -- "$NODE")" in
    */home/* | /root/* | *" /root/"*) die "$NODE lives in a home directory, which the service cannot see (ProtectHome=yes); install Node.js system-wide or pass --node" ;;
    /tmp/* | /var/tmp/* | *" /tmp/"* | *" /var/tmp/"*) die "$NODE lives under /tmp or /var/tmp, which the service cannot see (PrivateTmp=yes); install Node.js system-wide (/usr, /opt) or pass --node" ;;
  esac
  "$NODE" -e '
    const want = (require(process.argv[1]).engines?.node ?? ">=20").split("||")[0].replace(/^[\s>=^]*/, "").split(".").map(Number);
    const have = process.versions.node.split(".").map(Number);
    for (let i = 0; i < 3; i++) if ((have[i] ?? 0) !== (want[i] ?? 0)) process.exit((have[i] ?? 0) > (want[i] ?? 0) ? 0 : 1);
  ' "$SOURCE/package.json" || die "node $("$NODE" --version) is too old; package.json asks for $("$NODE" -p 'require(process.argv[1]).engines?.node' "$SOURCE/package.json")"
  if [ -n "$PACKAGE_MODE" ]; then
    package_check_node
  else
    command -v npm >/dev/null || die "npm not found (Debian: apt-get install npm)"
    [ -z "$ROOT" ] || refuse_foreign_image
  fi
}

# Technicians type `telematics-agent` (and the messages below tell them to): say so when this
# shell would not find the wrapper, e.g. a PATH without /usr/local/bin (sudo without secure_path).
check_cli_on_path() {
  local found dir
  found=$(command -v telematics-agent || true)
  dir=$(dirname -- "$CLI")
  if [ -z "$found" ]; then
    warn "$dir is not on this shell's PATH: run $CLI by its full path, or add $dir to PATH"
  elif [ "$found" != "$CLI" ]; then
    warn "telematics-agent on this shell's PATH is $found, not $CLI: run $CLI by its full path"
  fi
}

# --- Install --------------------------------------------------------------------------------------
RESTART_ON_FAILURE=0
# On every exit: staged files go, the lock goes; a run that failed before its commit also removes
# the directories it created; a successful one puts its manifest in place.
on_exit() {
  local status=$?
  if [ -n "$APP_DIR" ]; then
    rm -rf -- "$APP_DIR.new"
    rm -f -- "$ROOT$ETC/.config.json.new" "$ROOT$ETC/.password.new" "$ROOT$ETC/.ca.pem.new" "$ROOT$UNIT_FILE.new" "$ROOT$CLI.new"
  fi
  if [ "$status" -eq 0 ] && [ -n "$MANIFEST_FINAL" ]; then
    mv -f -- "$MANIFEST" "$MANIFEST_FINAL"
  elif [ "$status" -ne 0 ] && [ "$COMMITTED" -eq 1 ] && [ -n "$MANIFEST_FINAL" ]; then
    # Part of the install is in place: the manifest says what this run did before it failed.
    mv -f -- "$MANIFEST" "$MANIFEST_FINAL"
  fi
  if [ -n "$STAGE" ]; then rm -rf -- "$STAGE"; fi
  release_lock
  if [ "$status" -ne 0 ] && [ "$COMMITTED" -eq 0 ]; then remove_created_dirs; fi
  if [ "$status" -ne 0 ] && [ "$RESTART_ON_FAILURE" -eq 1 ]; then
    say "starting $UNIT_NAME again"
    systemctl start "$UNIT_NAME" || true
  fi
}

# Stops the running service, and has it started again should this run fail from here on.
stop_service() {
  if [ -n "$ROOT" ] || ! systemctl is-active --quiet "$UNIT_NAME"; then return 0; fi
  say "stopping $UNIT_NAME $1"
  systemctl stop "$UNIT_NAME"
  RESTART_ON_FAILURE=1
}

install_main() {
  require_first_install_flags
  say "installing telematics-agent from $SOURCE${ROOT:+ into $ROOT}"
  # Everything that can refuse the run comes first and writes only to $STAGE and $APP_DIR.new:
  # the password, the receiver's port, the configuration, the program, the configuration check.
  stage_password
  stage_config
  if [ -n "$PACKAGE_MODE" ]; then
    validate_config "$SOURCE/dist/cli/main.js"
  else
    make_dir "$(dirname -- "$APP_DIR")"
    app_stage "$APP_DIR.new"
    validate_config "$APP_DIR.new/dist/cli/main.js"
  fi

  # From here on the run changes the system.
  COMMITTED=1
  if [ "$PACKAGE_MODE" = file ]; then
    # The package's postinst creates the user (sysusers.d) and, where configured, restarts.
    package_install
    record user "$SERVICE_USER" "groups=$SERVICE_USER,dialout,gpio" "shell=/usr/sbin/nologin"
  elif [ -z "$PACKAGE_MODE" ]; then
    ensure_user
  fi
  mkdir -p -- "$ROOT$ETC"
  place "$ETC" 0750 root "$SERVICE_USER"
  if [ -z "$PACKAGE_MODE" ]; then
    stop_service "for the upgrade"
    app_swap "$APP_DIR.new"
    place "$APP" 0755 root root
  fi
  # Copied next to their targets first, so that each replace is a rename on the same file system.
  install -m 0600 -- "$STAGE/config.json" "$ROOT$ETC/.config.json.new"
  commit_file "$ROOT$ETC/.config.json.new" "$ROOT$ETC/config.json"
  place "$ETC/config.json" 0640 root "$SERVICE_USER"
  if [ -f "$STAGE/ca.pem" ]; then
    install -m 0644 -- "$STAGE/ca.pem" "$ROOT$ETC/.ca.pem.new"
    commit_file "$ROOT$ETC/.ca.pem.new" "$ROOT$ETC/ca.pem"
    place "$ETC/ca.pem" 0644 root root
  fi
  if [ -f "$STAGE/password" ]; then
    install -m 0600 -- "$STAGE/password" "$ROOT$ETC/.password.new"
    commit_file "$ROOT$ETC/.password.new" "$ROOT$ETC/password"
  fi
  place "$ETC/password" 0600 root root
  # systemd creates it too (StateDirectory=); made here so `status` works before the first start.
  mkdir -p -- "$ROOT$STATE"
  place "$STATE" 0700 "$SERVICE_USER" "$SERVICE_USER"
  # A wrapper, not a symlink to main.js and its `env node`: the native modules were built for
  # this node's ABI, so technicians' commands must run the same node as the service.
  if [ -z "$PACKAGE_MODE" ]; then install_cli_wrapper; fi
  install_unit
  [ -n "$ROOT" ] || check_cli_on_path

  if [ -n "$ROOT" ]; then
    # Offline enable: only creates the wants/ link inside DIR.
    if command -v systemctl >/dev/null; then systemctl --root="$ROOT" --quiet enable "$UNIT_NAME"; fi
    record run "systemctl enable $UNIT_NAME"
    record run "systemctl restart $UNIT_NAME"
    if [ "$PACKAGE_MODE" = file ]; then package_apply_owners; fi
    say "installed into $ROOT; the service was not started (--root). Owners: $MANIFEST_FINAL"
    return 0
  fi
  systemctl daemon-reload
  systemctl enable --quiet "$UNIT_NAME"
  say "starting $UNIT_NAME"
  RESTART_ON_FAILURE=0
  systemctl restart "$UNIT_NAME" || die "$UNIT_NAME did not start; see: journalctl -u $UNIT_NAME -e"
  wait_registered
}

# The command for technicians, from a checkout install (the package brings /usr/bin/telematics-agent).
install_cli_wrapper() {
  mkdir -p -- "$ROOT$(dirname -- "$CLI")"
  printf '#!/bin/sh\n# Written by provision.sh: the node the service runs, with its native modules.\nexec %s %s "$@"\n' \
    "$NODE" "$APP/dist/cli/main.js" >"$ROOT$CLI.new"
  commit_file "$ROOT$CLI.new" "$ROOT$CLI"
  place "$CLI" 0755 root root
}

parse_flags "$@"
preflight
if [ "$UNINSTALL" -eq 1 ]; then uninstall_main; else install_main; fi
