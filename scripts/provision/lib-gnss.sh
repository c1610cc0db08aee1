# shellcheck shell=bash
# Receiver auto-detection for scripts/provision.sh (sourced; uses ROOT, say, warn).
#
# A receiver announces itself: it sends NMEA sentences every second without being asked. So each
# candidate port is put in raw mode at a baud rate and listened to for a few seconds; the first
# one that yields a well-formed sentence ("$" talker, type, fields, "*" checksum) wins.

# Receivers ship at 9600 (u-blox, MediaTek), 115200 (many modules), 38400 (u-blox M8 setups) or
# 4800 (NMEA 0183's own rate, older SiRF). USB CDC-ACM ports ignore the baud rate: one try.
readonly GNSS_BAUD_RATES=(9600 115200 38400 4800)

# One well-formed sentence: "$", talker (GP GPS, GL GLONASS, GA Galileo, GB/BD BeiDou, GQ QZSS,
# GI NavIC, GN combined), sentence type, fields, "*" and the two-digit checksum.
readonly GNSS_NMEA_RE='^[$](G[ABILNPQ]|BD)[A-Z]{3},[^*]*[*][0-9A-Fa-f]{2}'

# Listens on DEVICE (a path on this machine) at BAUD for up to SECONDS; succeeds as soon as a
# sentence arrives. Reads at most 200 bytes at a time, so garbage without newlines is bounded.
gnss_listen() {
  local dev=$1 baud=$2 secs=$3 line fd found=1 now end
  # clocal: open without waiting for a carrier; -crtscts: receivers do not use flow control.
  stty -F "$dev" "$baud" raw -echo clocal -crtscts 2>/dev/null || return 1
  exec {fd}<"$dev" || return 1
  now=${EPOCHREALTIME/./}
  end=$((now + secs * 1000000))
  while [ "$now" -lt "$end" ]; do
    line=''
    IFS= read -r -t 1 -n 200 -u "$fd" line || true
    if [[ $line =~ $GNSS_NMEA_RE ]]; then
      found=0
      break
    fi
    now=${EPOCHREALTIME/./}
  done
  exec {fd}<&-
  return "$found"
}

# The stable /dev/serial/by-id alias of a device node when udev made one (USB numbering changes
# when devices are replugged or enumerate in another order), else the node itself.
gnss_stable_name() {
  local node=$1 link real
  real=$(readlink -f -- "$ROOT$node")
  for link in "$ROOT"/dev/serial/by-id/*; do
    if [ "$(readlink -f -- "$link")" = "$real" ]; then
      printf '%s\n' "${link#"$ROOT"}"
      return
    fi
  done
  printf '%s\n' "$node"
}

# The config schema's gnss.path rule (src/config/schema.ts DEVICE_PATH): under /dev, a safe
# alphabet, no ".." component. The path is written into a systemd drop-in (DeviceAllow=).
gnss_path_ok() {
  [[ $1 =~ ^/dev/[A-Za-z0-9._/:-]+$ ]] && [[ /$1/ != */../* ]]
}

# Whether gpsd serves the receiver here: its socket or service is active (or, under --root, enabled
# in the image).
gpsd_active() {
  if [ -n "$ROOT" ]; then
    [ -e "$ROOT/etc/systemd/system/sockets.target.wants/gpsd.socket" ] || [ -e "$ROOT/etc/systemd/system/multi-user.target.wants/gpsd.service" ]
    return
  fi
  command -v systemctl >/dev/null && { systemctl is-active --quiet gpsd.socket || systemctl is-active --quiet gpsd.service; }
}

# Sets GNSS_FOUND_PATH and GNSS_FOUND_BAUD, or fails when no candidate speaks NMEA.
# shellcheck disable=SC2034 # the GNSS_FOUND_* results are read by provision.sh
gnss_detect() {
  local secs=$1 dev node baud
  local -a rates
  GNSS_FOUND_PATH='' GNSS_FOUND_BAUD=''
  for dev in "$ROOT"/dev/ttyACM* "$ROOT"/dev/ttyUSB* "$ROOT"/dev/serial0; do
    [ -e "$dev" ] || continue
    node=${dev#"$ROOT"}
    case $node in
      /dev/ttyACM*) rates=(9600) ;;
      *) rates=("${GNSS_BAUD_RATES[@]}") ;;
    esac
    for baud in "${rates[@]}"; do
      say "listening for NMEA on $node at $baud baud (${secs}s)"
      if gnss_listen "$dev" "$baud" "$secs"; then
        GNSS_FOUND_PATH=$(gnss_stable_name "$node")
        GNSS_FOUND_BAUD=$baud
        say "receiver found: $GNSS_FOUND_PATH at $baud baud"
        return 0
      fi
    done
  done
  return 1
}

# Which serial ports the unit's DeviceAllow= covers (systemd/telematics-agent.service): the
# ttyACM, ttyUSB and ttyAMA classes and the Pi's /dev/serial0 and /dev/serial1 aliases. Any other
# port (a ttyS UART on an x86 gateway, say) needs its own DeviceAllow= drop-in.
gnss_port_covered() {
  local path=$1 hops=0 next
  case $path in /dev/serial0 | /dev/serial1) return 0 ;; esac
  # Follow aliases (/dev/serial/by-id/...) one link at a time: any name on the way may tell.
  while :; do
    case $(basename -- "$path") in ttyACM* | ttyUSB* | ttyAMA*) return 0 ;; esac
    if [ ! -L "$ROOT$path" ] || [ "$hops" -ge 8 ]; then return 1; fi
    next=$(readlink -- "$ROOT$path")
    case $next in /*) path=$next ;; *) path=$(dirname -- "$path")/$next ;; esac
    hops=$((hops + 1))
  done
}

# On a Raspberry Pi the UART behind /dev/serial0 is the login console unless it was switched off.
gnss_warn_serial_console() {
  local path=$1
  [ -z "$ROOT" ] && [ -r /proc/cmdline ] || return 0
  case $path in /dev/serial0 | /dev/ttyAMA0 | /dev/ttyS0) ;; *) return 0 ;; esac
  if grep -Eq 'console=(serial0|ttyAMA0|ttyS0)' /proc/cmdline; then
    warn "the kernel console is on $path (see /proc/cmdline); it garbles the receiver's data." \
      "Run raspi-config: Interface Options, Serial Port, login shell: No, hardware: Yes; then reboot."
  fi
}
