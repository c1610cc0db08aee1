# shellcheck shell=bash
# The system side for scripts/provision.sh (sourced; uses its flags and helpers): the service
# user, the unit and its companions, waiting for registration, and removal.

# --- The service user -----------------------------------------------------------------------------
ensure_user() {
  mkdir -p -- "$ROOT$(dirname -- "$SYSUSERS_FILE")"
  install -m 0644 -- "$SOURCE/systemd/telematics-agent.sysusers.conf" "$ROOT$SYSUSERS_FILE"
  place "$SYSUSERS_FILE" 0644 root root
  record user "$SERVICE_USER" "groups=$SERVICE_USER,dialout,gpio" "shell=/usr/sbin/nologin"
  # Under --root no user is created: an /etc/passwd and /etc/group written into DIR would hold only
  # this user and replace the target's own when the tree is copied onto it. The target's
  # systemd-sysusers creates the user from the sysusers.d file at boot, and the manifest names it.
  if [ -z "$ROOT" ]; then systemd-sysusers "$SYSUSERS_FILE"; fi
}

# --- The unit -------------------------------------------------------------------------------------
install_unit() {
  local tmp=$ROOT$UNIT_FILE.new gnss_path dropin=$ROOT$DROPIN_DIR/10-gnss-device.conf
  # The package brings its unit (/usr/lib/systemd/system, ExecStart with Debian's /usr/bin/node).
  if [ -z "$PACKAGE_MODE" ]; then
    mkdir -p -- "$ROOT$(dirname -- "$UNIT_FILE")"
    # ExecStart= needs an absolute path; the repository's unit names Debian's /usr/bin/node.
    sed "s#^ExecStart=/usr/bin/node #ExecStart=$NODE #" "$APP_DIR/systemd/$UNIT_NAME" >"$tmp"
    grep -q "^ExecStart=$NODE " "$tmp" || die "could not set the node path in the unit's ExecStart="
    commit_file "$tmp" "$ROOT$UNIT_FILE"
    place "$UNIT_FILE" 0644 root root
  fi

  gnss_path=$("$NODE" -p 'require(process.argv[1]).gnss?.path ?? ""' "$ROOT$ETC/config.json")
  [ -z "$gnss_path" ] || gnss_path_ok "$gnss_path" || die "gnss.path in $ETC/config.json is not a device path under /dev; fix it (e.g. --gnss-path /dev/ttyACM0)"
  if [ "$("$NODE" -p 'require(process.argv[1]).gnss?.gpsd ?? ""' "$ROOT$ETC/config.json")" != "" ]; then
    # gpsd owns the receiver: no serial device classes, no dialout group.
    mkdir -p -- "$ROOT$DROPIN_DIR"
    install -m 0644 -- "$APP_DIR/systemd/telematics-agent.gpsd.conf" "$dropin.new"
    commit_file "$dropin.new" "$dropin"
    place "${dropin#"$ROOT"}" 0644 root root
  elif [ -n "$gnss_path" ] && ! gnss_port_covered "$gnss_path"; then
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
  [ -z "$PACKAGE_MODE" ] || return 0

  # The serial drivers load at boot, so the unit's device classes exist before a receiver does.
  mkdir -p -- "$ROOT$(dirname -- "$MODULES_FILE")"
  install -m 0644 -- "$APP_DIR/systemd/telematics-agent.modules-load.conf" "$ROOT$MODULES_FILE"
  place "$MODULES_FILE" 0644 root root
  # The configuration's owners at boot, for trees copied from --root (see the file).
  mkdir -p -- "$ROOT$(dirname -- "$TMPFILES_FILE")"
  install -m 0644 -- "$APP_DIR/systemd/telematics-agent.tmpfiles.conf" "$ROOT$TMPFILES_FILE"
  place "$TMPFILES_FILE" 0644 root root
  if [ -z "$ROOT" ]; then
    modprobe -a cdc_acm usbserial 2>/dev/null || warn "could not load the cdc_acm and usbserial drivers now; they load at the next boot"
  fi
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
  if [ -f "$ROOT/var/lib/dpkg/info/telematics-agent.list" ]; then
    # Installed from the package: dpkg removes it (purge: with the data and the configuration).
    local action=--remove
    [ "$PURGE" -eq 0 ] || action=--purge
    if [ -n "$ROOT" ]; then chroot "$ROOT" dpkg "$action" telematics-agent; else dpkg "$action" telematics-agent; fi
    rm -rf -- "$ROOT$DROPIN_DIR"
    say "dpkg $action telematics-agent done"
    return 0
  fi
  if [ -f "$ROOT$UNIT_FILE" ]; then
    if [ -n "$ROOT" ]; then
      if command -v systemctl >/dev/null; then systemctl --root="$ROOT" --quiet disable "$UNIT_NAME"; fi
      record run "systemctl disable --now $UNIT_NAME"
    else
      systemctl disable --now --quiet "$UNIT_NAME"
    fi
  fi
  rm -rf -- "$ROOT$UNIT_FILE" "$ROOT$DROPIN_DIR" "$ROOT$MODULES_FILE" "$ROOT$TMPFILES_FILE"
  if [ -n "$ROOT" ]; then
    record run "systemctl daemon-reload"
  else
    systemctl daemon-reload
    systemctl reset-failed "$UNIT_NAME" 2>/dev/null || true
  fi
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
