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
  --gnss-path DEVICE|auto            receiver port; without it (first install) or with "auto",
                                     listens for NMEA on /dev/ttyACM*, /dev/ttyUSB*, /dev/serial0
  --baud-rate N                      receiver baud rate (auto-detected with the port)

Installation:
  --source DIR          built package to install (default: $(dirname -- "$SCRIPT_DIR"))
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

# --- Flags ---------------------------------------------------------------------------------------
ROOT='' SOURCE='' NODE='' UNINSTALL=0 PURGE=0 PROBE_SECONDS=3 WAIT_TIMEOUT=180
ENVIRONMENT='' USERNAME='' PASSWORD_FILE='' EXTERNAL_SYSTEM_ID='' CARRIER_CODE='' DEVICE_URL=''
LICENSE_PLATE='' GNSS_PATH='' BAUD_RATE=''

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
      *) die "unexpected argument \"$flag\" (see --help)" ;;
    esac
    case $flag in
      --environment) var=ENVIRONMENT ;;
      --username) var=USERNAME ;;
      --password-file) var=PASSWORD_FILE ;;
      --external-system-id) var=EXTERNAL_SYSTEM_ID ;;
      --carrier-code) var=CARRIER_CODE ;;
      --device-url) var=DEVICE_URL ;;
      --license-plate) var=LICENSE_PLATE ;;
      --gnss-path) var=GNSS_PATH ;;
      --baud-rate) var=BAUD_RATE ;;
      --source) var=SOURCE ;;
      --node) var=NODE ;;
      --probe-seconds) var=PROBE_SECONDS ;;
      --wait-timeout) var=WAIT_TIMEOUT ;;
      --root) var=ROOT ;;
      *) die "unknown flag $flag (see --help)" ;;
    esac
    if [ "$inline" -eq 1 ]; then
      shift
    else
      [ $# -ge 2 ] || die "$flag needs a value (see --help)"
      shift 2
    fi
    printf -v "$var" '%s' "$value"
  done
  case $ENVIRONMENT in '' | production | staging) ;; *) die "--environment must be production or staging, got \"$ENVIRONMENT\"" ;; esac
  [[ $PROBE_SECONDS =~ ^[1-9][0-9]*$ ]] || die "--probe-seconds must be a whole number of seconds"
  [[ $WAIT_TIMEOUT =~ ^[0-9]+$ ]] || die "--wait-timeout must be a whole number of seconds"
  [ -z "$BAUD_RATE" ] || [[ $BAUD_RATE =~ ^[0-9]+$ ]] || die "--baud-rate must be a number, e.g. 9600"
  [ "$PURGE" -eq 0 ] || [ "$UNINSTALL" -eq 1 ] || die "--purge goes with --uninstall"
}

# --- Effects on the system, or a record of them under --root --------------------------------------
# Under --root nothing outside DIR changes: ownership that needs the service user (which exists
# only on the target) is written to the manifest instead, modes are applied for real.
MANIFEST='' APP_DIR=''

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

# Commands that act on the running host: skipped (and recorded) under --root.
host() {
  if [ -n "$ROOT" ]; then
    record run "$*"
    return 0
  fi
  "$@"
}

# An atomic replace whose result survives a power cut: rename, then flush file and directory.
commit_file() {
  local tmp=$1 final=$2
  sync -- "$tmp"
  mv -f -- "$tmp" "$final"
  sync -- "$(dirname -- "$final")"
}

# shellcheck source=provision/lib-app.sh
source "$HELPERS/lib-app.sh"
# shellcheck source=provision/lib-gnss.sh
source "$HELPERS/lib-gnss.sh"

# --- Checks before anything changes -------------------------------------------------------------
preflight() {
  if [ -n "$ROOT" ]; then
    mkdir -p -- "$ROOT"
    ROOT=$(cd -- "$ROOT" && pwd)
    [ "$ROOT" != / ] || ROOT=''
  fi
  if [ -z "$ROOT" ]; then
    [ "$(id -u)" -eq 0 ] || die "run as root (sudo $0 ...), or pass --root DIR to install into a directory"
    [ -d /run/systemd/system ] || die "systemd is not running on this machine; pass --root DIR to prepare an image instead"
  else
    MANIFEST=$ROOT/provision-manifest.tsv
    : >"$MANIFEST"
  fi
  APP_DIR=$ROOT$APP
  mkdir -p -- "$ROOT/run"
  exec 9>>"$ROOT/run/telematics-agent-provision.lock"
  flock -n 9 || die "another provisioning run is in progress"
  [ "$UNINSTALL" -eq 1 ] && return 0

  SOURCE=${SOURCE:-$(dirname -- "$SCRIPT_DIR")}
  SOURCE=$(cd -- "$SOURCE" 2>/dev/null && pwd) || die "--source: no such directory"
  [ -f "$SOURCE/package.json" ] || die "$SOURCE has no package.json; pass --source DIR (a built checkout or an unpacked release)"
  [ -f "$SOURCE/systemd/$UNIT_NAME" ] || die "$SOURCE has no systemd/$UNIT_NAME; pass --source DIR (a built checkout or an unpacked release)"
  [ -f "$SOURCE/dist/cli/main.js" ] || die "$SOURCE has no dist/: build it first (npm ci && npm run build), or use a release tarball (npm pack)"

  NODE=${NODE:-$(command -v node || true)}
  [ -n "$NODE" ] || die "node not found; install Node.js 20 or later (Debian: apt-get install nodejs; or NodeSource)"
  [[ $NODE =~ ^/[A-Za-z0-9._/+-]+$ ]] || die "--node must be an absolute path without spaces, got \"$NODE\""
  [ -x "$NODE" ] || die "$NODE is not executable"
  # The unit has ProtectHome=yes: a node under /root or /home (nvm) is invisible to the service.
  case "$NODE $(readlink -f -- "$NODE")" in
    */home/* | /root/* | *" /root/"*) die "$NODE lives in a home directory, which the service cannot see (ProtectHome=yes); install Node.js system-wide or pass --node" ;;
  esac
  "$NODE" -e '
    const want = (require(process.argv[1]).engines?.node ?? ">=20").replace(/^>=\s*/, "").split(".").map(Number);
    const have = process.versions.node.split(".").map(Number);
    for (let i = 0; i < 3; i++) if ((have[i] ?? 0) !== (want[i] ?? 0)) process.exit((have[i] ?? 0) > (want[i] ?? 0) ? 0 : 1);
  ' "$SOURCE/package.json" || die "node $("$NODE" --version) is too old; package.json asks for $("$NODE" -p 'require(process.argv[1]).engines?.node' "$SOURCE/package.json")"
  command -v npm >/dev/null || die "npm not found (Debian: apt-get install npm)"
}

# --- The service user -----------------------------------------------------------------------------
ensure_user() {
  mkdir -p -- "$ROOT$(dirname -- "$SYSUSERS_FILE")"
  install -m 0644 -- "$SOURCE/systemd/telematics-agent.sysusers.conf" "$ROOT$SYSUSERS_FILE"
  place "$SYSUSERS_FILE" 0644 root root
  record user "$SERVICE_USER" "groups=$SERVICE_USER,dialout" "shell=/usr/sbin/nologin"
  if [ -z "$ROOT" ]; then
    systemd-sysusers "$SYSUSERS_FILE"
  elif command -v systemd-sysusers >/dev/null; then
    # Writes DIR/etc/passwd and group only, like an image build would.
    systemd-sysusers --root="$ROOT" "$ROOT$SYSUSERS_FILE" >/dev/null 2>&1 ||
      warn "systemd-sysusers --root could not write $ROOT/etc/passwd (not root?); the manifest records the user"
  fi
}

# --- Password -------------------------------------------------------------------------------------
# Leaves the new password in $ROOT$ETC/.password.new (0600), or nothing when the stored one stays.
stage_password() {
  local pw='' again='' tmp=$ROOT$ETC/.password.new
  if [ "$PASSWORD_FILE" = - ]; then
    IFS= read -r pw || [ -n "$pw" ] || die "--password-file -: nothing on standard input"
  elif [ -n "$PASSWORD_FILE" ]; then
    [ -r "$PASSWORD_FILE" ] || die "--password-file $PASSWORD_FILE: cannot read it"
    IFS= read -r pw <"$PASSWORD_FILE" || [ -n "$pw" ] || die "--password-file $PASSWORD_FILE is empty"
  elif [ -f "$ROOT$ETC/password" ]; then
    say "keeping the stored password ($ETC/password)"
    return 0
  elif { : </dev/tty; } 2>/dev/null; then
    IFS= read -rs -p "Platform password for ${USERNAME:-the platform user}: " pw </dev/tty && echo >/dev/tty
    IFS= read -rs -p "Again, to be sure: " again </dev/tty && echo >/dev/tty
    [ "$pw" = "$again" ] || die "the two passwords differ; nothing was changed"
  else
    die "no password: pass --password-file FILE (or - for standard input), or run in a terminal to be asked"
  fi
  pw=${pw%$'\r'}
  [ -n "$pw" ] || die "the password is empty"
  (umask 077 && printf '%s' "$pw" >"$tmp")
}

# --- Configuration --------------------------------------------------------------------------------
require_first_install_flags() {
  local -a missing=()
  [ ! -f "$ROOT$ETC/config.json" ] || return 0
  [ -n "$USERNAME" ] || missing+=(--username)
  [ -n "$EXTERNAL_SYSTEM_ID" ] || missing+=(--external-system-id)
  [ -n "$CARRIER_CODE" ] || missing+=(--carrier-code)
  [ -n "$DEVICE_URL" ] || missing+=(--device-url)
  [ "${#missing[@]}" -eq 0 ] || die "a first install needs ${missing[*]} (see --help)"
}

# Leaves the new configuration in $ROOT$ETC/.config.json.new. An existing configuration is kept:
# only the keys given as flags change, so a technician's hand edits survive an upgrade.
stage_config() {
  local existing=$ROOT$ETC/config.json input=- tmp=$ROOT$ETC/.config.json.new
  local -a ops=()
  if [ -f "$existing" ]; then
    input=$existing
    say "keeping $ETC/config.json; changing only the keys given as flags"
  else
    ops+=("set:environment=${ENVIRONMENT:-production}")
  fi
  [ -z "$ENVIRONMENT" ] || ops+=("set:environment=$ENVIRONMENT")
  [ -z "$DEVICE_URL" ] || ops+=("set:platform.deviceUrl=$DEVICE_URL")
  [ -z "$USERNAME" ] || ops+=("set:credentials.username=$USERNAME")
  # The password lives in its own 0600 file: the service gets it as a systemd credential, and
  # `config check` / doctor (run as root) read it from the same path.
  ops+=("set:credentials.passwordFile=$ETC/password" unset:credentials.password)
  [ -z "$EXTERNAL_SYSTEM_ID" ] || ops+=("set:device.externalSystemId=$EXTERNAL_SYSTEM_ID")
  [ -z "$CARRIER_CODE" ] || ops+=("set:device.carrierCode=$CARRIER_CODE")
  [ -z "$LICENSE_PLATE" ] || ops+=("set:device.licensePlate=$LICENSE_PLATE")

  # Detection on a first install without --gnss-path, or when asked for with "auto".
  if [ "$GNSS_PATH" = auto ] || { [ -z "$GNSS_PATH" ] && [ ! -f "$existing" ]; }; then
    # The port must be free to listen on it; the service is started again at the end either way.
    if [ -z "$ROOT" ] && systemctl is-active --quiet "$UNIT_NAME"; then
      say "stopping $UNIT_NAME to listen on the serial ports"
      systemctl stop "$UNIT_NAME"
      RESTART_ON_FAILURE=1
    fi
    gnss_detect "$PROBE_SECONDS" || die "no receiver sent NMEA on /dev/ttyACM*, /dev/ttyUSB* or /dev/serial0 (listened ${PROBE_SECONDS}s per port and baud rate); connect it, or pass --gnss-path DEVICE [--baud-rate N]"
    ops+=("set:gnss.path=$GNSS_FOUND_PATH")
    [ -n "$BAUD_RATE" ] || ops+=("num:gnss.baudRate=$GNSS_FOUND_BAUD")
  elif [ -n "$GNSS_PATH" ]; then
    ops+=("set:gnss.path=$GNSS_PATH")
    [ -n "$ROOT" ] || [ -e "$GNSS_PATH" ] || warn "$GNSS_PATH does not exist now; the agent waits for it"
  fi
  [ -z "$BAUD_RATE" ] || ops+=("num:gnss.baudRate=$BAUD_RATE")
  [ -f "$existing" ] || ops+=("set:dataDir=$STATE")

  (umask 077 && "$NODE" "$HELPERS/config-merge.mjs" "$input" "${ops[@]}" >"$tmp")
}

validate_config() {
  local stage_cli=$1
  say "checking the configuration (telematics-agent config check)"
  env -u TELEMATICS_AGENT_PASSWORD -u CREDENTIALS_DIRECTORY -u TELEMATICS_AGENT_CONFIG \
    "$NODE" "$stage_cli" config check --quiet --config "$ROOT$ETC/.config.json.new" ||
    die "the configuration is not valid (see above); nothing was changed. Fix the flags, or edit $ETC/config.json"
}

# --- The unit -------------------------------------------------------------------------------------
install_unit() {
  local tmp=$ROOT$UNIT_FILE.new gnss_path dropin=$ROOT$DROPIN_DIR/10-gnss-device.conf
  mkdir -p -- "$ROOT$(dirname -- "$UNIT_FILE")"
  # ExecStart= needs an absolute path; the repository's unit names Debian's /usr/bin/node.
  sed "s#^ExecStart=/usr/bin/node #ExecStart=$NODE #" "$APP_DIR/systemd/$UNIT_NAME" >"$tmp"
  grep -q "^ExecStart=$NODE " "$tmp" || die "could not set the node path in the unit's ExecStart="
  commit_file "$tmp" "$ROOT$UNIT_FILE"
  place "$UNIT_FILE" 0644 root root

  gnss_path=$("$NODE" -p 'require(process.argv[1]).gnss?.path ?? ""' "$ROOT$ETC/config.json")
  if [ -n "$gnss_path" ] && ! gnss_port_covered "$gnss_path"; then
    mkdir -p -- "$ROOT$DROPIN_DIR"
    printf '%s\n' "# Written by provision.sh: the configured receiver port is outside the unit's serial classes." \
      "[Service]" "DeviceAllow=$gnss_path rw" >"$dropin.new"
    commit_file "$dropin.new" "$dropin"
    place "${dropin#"$ROOT"}" 0644 root root
  elif [ -e "$dropin" ]; then
    rm -f -- "$dropin"
    rmdir -- "$ROOT$DROPIN_DIR" 2>/dev/null || true
  fi
  [ -z "$gnss_path" ] || gnss_warn_serial_console "$gnss_path"

  # The serial drivers load at boot, so the unit's device classes exist before a receiver does.
  mkdir -p -- "$ROOT$(dirname -- "$MODULES_FILE")"
  install -m 0644 -- "$APP_DIR/systemd/telematics-agent.modules-load.conf" "$ROOT$MODULES_FILE"
  place "$MODULES_FILE" 0644 root root
  if [ -z "$ROOT" ]; then
    modprobe -a cdc_acm usbserial 2>/dev/null || warn "could not load the cdc_acm and usbserial drivers now; they load at the next boot"
  fi
}

# --- Install --------------------------------------------------------------------------------------
RESTART_ON_FAILURE=0
cleanup() {
  local status=$?
  rm -rf -- "$APP_DIR.new"
  rm -f -- "$ROOT$ETC/.config.json.new" "$ROOT$ETC/.password.new" "$ROOT$UNIT_FILE.new" "$ROOT$CLI.new"
  if [ "$status" -ne 0 ] && [ "$RESTART_ON_FAILURE" -eq 1 ]; then
    say "starting $UNIT_NAME again"
    systemctl start "$UNIT_NAME" || true
  fi
}

install_main() {
  trap cleanup EXIT
  require_first_install_flags
  say "installing telematics-agent from $SOURCE${ROOT:+ into $ROOT}"
  ensure_user
  mkdir -p -- "$ROOT$ETC"
  place "$ETC" 0750 root "$SERVICE_USER"
  stage_password
  stage_config
  app_stage "$APP_DIR.new"
  validate_config "$APP_DIR.new/dist/cli/main.js"

  if [ -z "$ROOT" ] && systemctl is-active --quiet "$UNIT_NAME"; then
    say "stopping $UNIT_NAME for the upgrade"
    systemctl stop "$UNIT_NAME"
    RESTART_ON_FAILURE=1
  fi
  app_swap "$APP_DIR.new"
  place "$APP" 0755 root root
  commit_file "$ROOT$ETC/.config.json.new" "$ROOT$ETC/config.json"
  place "$ETC/config.json" 0640 root "$SERVICE_USER"
  if [ -f "$ROOT$ETC/.password.new" ]; then commit_file "$ROOT$ETC/.password.new" "$ROOT$ETC/password"; fi
  place "$ETC/password" 0600 root root
  # systemd creates it too (StateDirectory=); made here so `status` works before the first start.
  mkdir -p -- "$ROOT$STATE"
  place "$STATE" 0700 "$SERVICE_USER" "$SERVICE_USER"
  # A wrapper, not a symlink to main.js and its `env node`: the native modules were built for
  # this node's ABI, so technicians' commands must run the same node as the service.
  mkdir -p -- "$ROOT$(dirname -- "$CLI")"
  printf '#!/bin/sh\n# Written by provision.sh: the node the service runs, with its native modules.\nexec %s %s "$@"\n' \
    "$NODE" "$APP/dist/cli/main.js" >"$ROOT$CLI.new"
  commit_file "$ROOT$CLI.new" "$ROOT$CLI"
  place "$CLI" 0755 root root
  install_unit

  if [ -n "$ROOT" ]; then
    # Offline enable: only creates the wants/ link inside DIR.
    if command -v systemctl >/dev/null; then systemctl --root="$ROOT" --quiet enable "$UNIT_NAME"; fi
    record run "systemctl enable $UNIT_NAME"
    record run "systemctl restart $UNIT_NAME"
    say "installed into $ROOT; the service was not started (--root). Owners: $MANIFEST"
    return 0
  fi
  systemctl daemon-reload
  systemctl enable --quiet "$UNIT_NAME"
  say "starting $UNIT_NAME"
  RESTART_ON_FAILURE=0
  systemctl restart "$UNIT_NAME" || die "$UNIT_NAME did not start; see: journalctl -u $UNIT_NAME -e"
  wait_registered
}

# Polls the running daemon until the platform has given the device its UUID.
wait_registered() {
  local cli=$APP/dist/cli/main.js deadline uuid=''
  deadline=$((SECONDS + WAIT_TIMEOUT))
  if [ "$WAIT_TIMEOUT" -gt 0 ]; then
    say "waiting up to ${WAIT_TIMEOUT}s for the device to register with the platform"
    while :; do
      uuid=$("$NODE" "$cli" status --json 2>/dev/null |
        "$NODE" -e 'let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => { try { const u = JSON.parse(s).registration?.deviceUUID; if (typeof u === "string") process.stdout.write(u); } catch {} });' || true)
      if [ -n "$uuid" ] || [ "$SECONDS" -ge "$deadline" ]; then break; fi
      sleep 2
    done
  fi
  "$NODE" "$cli" status || true
  if [ -n "$uuid" ]; then
    say "done: registered as deviceUUID $uuid"
  elif [ "$WAIT_TIMEOUT" -gt 0 ]; then
    die "the service runs but the device did not register within ${WAIT_TIMEOUT}s; it keeps trying. Look at: telematics-agent doctor; journalctl -u $UNIT_NAME -e"
  fi
}

# --- Uninstall ------------------------------------------------------------------------------------
uninstall_main() {
  say "removing telematics-agent${ROOT:+ from $ROOT}"
  if [ -f "$ROOT$UNIT_FILE" ]; then
    if [ -n "$ROOT" ]; then
      if command -v systemctl >/dev/null; then systemctl --root="$ROOT" --quiet disable "$UNIT_NAME"; fi
      record run "systemctl disable --now $UNIT_NAME"
    else
      systemctl disable --now --quiet "$UNIT_NAME"
    fi
  fi
  rm -rf -- "$ROOT$UNIT_FILE" "$ROOT$DROPIN_DIR" "$ROOT$MODULES_FILE"
  host systemctl daemon-reload
  if [ -z "$ROOT" ]; then systemctl reset-failed "$UNIT_NAME" 2>/dev/null || true; fi
  rm -rf -- "$APP_DIR" "$APP_DIR.new" "$APP_DIR.old" "$ROOT$CLI"
  record removed "$APP"
  if [ "$PURGE" -eq 1 ]; then
    rm -rf -- "$ROOT$STATE" "$ROOT$ETC" "$ROOT$SYSUSERS_FILE"
    record removed "$STATE"
    record removed "$ETC"
    if [ -n "$ROOT" ]; then
      record run "userdel $SERVICE_USER"
    elif id -u "$SERVICE_USER" >/dev/null 2>&1; then
      userdel "$SERVICE_USER"
    fi
    say "removed everything, including the data, the configuration and the user $SERVICE_USER"
  else
    say "kept $STATE (identity, tokens, buffered fixes), $ETC (configuration, password) and the user $SERVICE_USER; --uninstall --purge removes them"
  fi
}

parse_flags "$@"
preflight
if [ "$UNINSTALL" -eq 1 ]; then uninstall_main; else install_main; fi
