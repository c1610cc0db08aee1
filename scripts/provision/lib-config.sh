# shellcheck shell=bash
# The password and the configuration for scripts/provision.sh (sourced; uses its flags and
# helpers). Both are staged in $STAGE (a private temporary directory) and only copied to their
# final place after `config check` of the staged program accepted them, so a refused run changes
# nothing.

# --- Password -------------------------------------------------------------------------------------
# Leaves the new password in $STAGE/password (0600), or nothing when the stored one stays.
stage_password() {
  local pw='' again='' tmp=$STAGE/password
  if [ "$PASSWORD_FILE" = - ]; then
    IFS= read -r pw || [ -n "$pw" ] || die "--password-file -: nothing on standard input"
  elif [ -n "$PASSWORD_FILE" ]; then
    [ -r "$PASSWORD_FILE" ] || usage_error "--password-file $PASSWORD_FILE: cannot read it"
    IFS= read -r pw <"$PASSWORD_FILE" || [ -n "$pw" ] || usage_error "--password-file $PASSWORD_FILE is empty"
  elif [ -f "$ROOT$ETC/password" ]; then
    say "keeping the stored password ($ETC/password)"
    return 0
  elif { : </dev/tty; } 2>/dev/null; then
    IFS= read -rs -p "Platform password for ${USERNAME:-the platform user}: " pw </dev/tty && echo >/dev/tty
    IFS= read -rs -p "Again, to be sure: " again </dev/tty && echo >/dev/tty
    [ "$pw" = "$again" ] || die "the two passwords differ; nothing was changed"
  else
    usage_error "no password: pass --password-file FILE (or - for standard input), or run in a terminal to be asked"
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
  [ "${#missing[@]}" -eq 0 ] || usage_error "a first install needs ${missing[*]} (see --help)"
}

# Leaves the new configuration in $STAGE/config.json. An existing configuration is kept: only the
# keys given as flags change, so a technician's hand edits survive an upgrade.
stage_config() {
  local existing=$ROOT$ETC/config.json input=- tmp=$STAGE/config.json
  local -a ops=()
  if [ -f "$existing" ]; then
    input=$existing
    say "keeping $ETC/config.json; changing only the keys given as flags"
    [ -z "$ENVIRONMENT" ] || ops+=("set:environment=$ENVIRONMENT")
  else
    ops+=("set:environment=${ENVIRONMENT:-production}")
  fi
  [ -z "$DEVICE_URL" ] || ops+=("set:platform.deviceUrl=$DEVICE_URL")
  [ -z "$USERNAME" ] || ops+=("set:credentials.username=$USERNAME")
  # The password lives in its own 0600 file: the service gets it as a systemd credential, and
  # `config check` / doctor (run as root) read it from the same path.
  ops+=("set:credentials.passwordFile=$ETC/password" unset:credentials.password)
  [ -z "$EXTERNAL_SYSTEM_ID" ] || ops+=("set:device.externalSystemId=$EXTERNAL_SYSTEM_ID")
  [ -z "$CARRIER_CODE" ] || ops+=("set:device.carrierCode=$CARRIER_CODE")
  [ -z "$LICENSE_PLATE" ] || ops+=("set:device.licensePlate=$LICENSE_PLATE")
  [ -z "$DRIVER_NAME" ] || ops+=("set:device.driverName=$DRIVER_NAME")
  [ -z "$AUTH_URL" ] || ops+=("set:platform.authUrl=$AUTH_URL")
  [ -z "$PLANNING_URL" ] || ops+=("set:platform.planningUrl=$PLANNING_URL")
  # The CA goes beside the configuration: the service cannot see home directories, and the file
  # given may not outlive the installation.
  if [ -n "$CA_FILE" ]; then
    install -m 0644 -- "$CA_FILE" "$STAGE/ca.pem"
    ops+=("set:platform.caFile=$ETC/ca.pem")
  fi

  # gpsd already owns the receiver on many gateways (chrony takes the time from it): a first
  # install that names no source uses it rather than listening on a port gpsd holds.
  local source=$GNSS_SOURCE
  [ -n "$source" ] || [ -z "$GPSD_ADDRESS" ] || source=gpsd
  if [ -z "$source" ] && [ -z "$GNSS_PATH" ] && [ ! -f "$existing" ] && gpsd_active; then
    say "gpsd is active (gpsd.socket/gpsd.service) and owns the receiver: reading it through gpsd (--gnss-source gpsd); pass --gnss-source serial to use the port directly"
    source=gpsd
  fi
  if [ "$source" = gpsd ]; then
    ops+=("set:gnss.gpsd=${GPSD_ADDRESS:-127.0.0.1:2947}" unset:gnss.path unset:gnss.baudRate)
  # Detection on a first install without --gnss-path, or when asked for with "auto".
  elif [ "$GNSS_PATH" = auto ] || { [ -z "$GNSS_PATH" ] && { [ ! -f "$existing" ] || [ "$source" = serial ]; }; }; then
    # The port must be free to listen on it; the service is started again at the end either way.
    stop_service "to listen on the serial ports"
    gnss_detect "$PROBE_SECONDS" || die "no receiver sent NMEA on /dev/ttyACM*, /dev/ttyUSB* or /dev/serial0 (listened ${PROBE_SECONDS}s per port and baud rate); connect it, or pass --gnss-path DEVICE [--baud-rate N]"
    ops+=("set:gnss.path=$GNSS_FOUND_PATH" unset:gnss.gpsd unset:gnss.gpsdDevice)
    [ -n "$BAUD_RATE" ] || ops+=("num:gnss.baudRate=$GNSS_FOUND_BAUD")
  elif [ -n "$GNSS_PATH" ]; then
    ops+=("set:gnss.path=$GNSS_PATH" unset:gnss.gpsd unset:gnss.gpsdDevice)
    [ -n "$ROOT" ] || [ -e "$GNSS_PATH" ] || warn "$GNSS_PATH does not exist now; the agent waits for it"
  fi
  [ -z "$BAUD_RATE" ] || [ "$source" = gpsd ] || ops+=("num:gnss.baudRate=$BAUD_RATE")
  [ -f "$existing" ] || ops+=("set:dataDir=$STATE")

  (umask 077 && "$NODE" "$HELPERS/config-merge.mjs" "$input" "${ops[@]}" >"$tmp")
}

validate_config() {
  local stage_cli=$1
  say "checking the configuration (telematics-agent config check)"
  env -u TELEMATICS_AGENT_PASSWORD -u CREDENTIALS_DIRECTORY -u TELEMATICS_AGENT_CONFIG \
    "$NODE" "$stage_cli" config check --quiet --config "$STAGE/config.json" ||
    usage_error "the configuration is not valid (see above); nothing was changed. Fix the flags, or edit $ETC/config.json"
}
