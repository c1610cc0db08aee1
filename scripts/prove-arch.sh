#!/usr/bin/env bash
# Proves a package on its architecture under emulation: a Debian 13 (trixie) root of that
# architecture (mmdebstrap, with Debian's nodejs and systemd), the .deb installed there with
# `dpkg -i` in a network namespace with no network, and the packaged demo run there: the real
# daemon (under qemu-user) delivers a replayed drive to the packaged platform simulator, every fix
# exactly once, through an injected outage; then `dpkg -r` must keep the configuration and the data
# and `dpkg -P` remove them. Prints the times it took.
#
#   scripts/prove-arch.sh --arch arm64|armhf [--deb FILE] [--minutes N]   (default: a 10-minute drive)
#
# Needs root, qemu-user-static, binfmt-support and mmdebstrap (Debian packages) on the host, and
# Debian's mirror once, to make the root (kept in $PROVE_CACHE, default /var/tmp/telematics-agent-roots).
# The package comes from `npm run package -- --arch ARCH` unless --deb names one.
set -euo pipefail

ARCH='' DEB='' MINUTES=10
while [ $# -gt 0 ]; do
  case $1 in
    --arch) ARCH=${2-} && shift 2 ;;
    --deb) DEB=${2-} && shift 2 ;;
    --minutes) MINUTES=${2-} && shift 2 ;;
    -h | --help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//' && exit 0 ;;
    *) echo "prove-arch: unknown argument $1 (see --help)" >&2 && exit 2 ;;
  esac
done
case $ARCH in arm64 | armhf | amd64) ;; *) echo "prove-arch: --arch must be arm64, armhf or amd64" >&2 && exit 2 ;; esac
[[ $MINUTES =~ ^[1-9][0-9]*$ ]] || { echo "prove-arch: --minutes must be a whole number" >&2 && exit 2; }

say() { printf 'prove-arch: %s\n' "$*"; }
die() {
  printf 'prove-arch: error: %s\n' "$*" >&2
  exit 1
}
[ "$(id -u)" -eq 0 ] || die "run as root (chroot, mounts, network namespace)"
for tool in mmdebstrap unshare chroot; do command -v "$tool" >/dev/null || die "$tool not found (apt-get install mmdebstrap qemu-user-static binfmt-support)"; done

ROOT_DIR=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }

# Foreign binaries run through binfmt_misc (the F flag: the interpreter is opened once, so it
# works inside the chroot). In a container the file system may need mounting.
if [ "$ARCH" != amd64 ]; then
  [ -e /proc/sys/fs/binfmt_misc/register ] || mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc ||
    die "cannot mount binfmt_misc; foreign binaries cannot run here"
  emu=$([ "$ARCH" = arm64 ] && echo qemu-aarch64 || echo qemu-arm)
  [ -e "/proc/sys/fs/binfmt_misc/$emu" ] || update-binfmts --enable "$emu" 2>/dev/null || true
  grep -q enabled "/proc/sys/fs/binfmt_misc/$emu" 2>/dev/null || die "$emu is not registered with binfmt_misc (apt-get install qemu-user-static binfmt-support)"
fi

# --- The package -------------------------------------------------------------------------------
if [ -z "$DEB" ]; then
  t0=$(now)
  DEB=$(cd "$ROOT_DIR" && npm run --silent package -- --arch "$ARCH")
  say "package built in $(secs "$t0" "$(now)") s: $DEB"
fi
[ -f "$DEB" ] || die "no package at $DEB"
[ "$(dpkg-deb -f "$DEB" Architecture)" = "$ARCH" ] || die "$DEB is for $(dpkg-deb -f "$DEB" Architecture), not $ARCH"

# --- A Debian 13 root of the architecture, made once -------------------------------------------
CACHE=${PROVE_CACHE:-/var/tmp/telematics-agent-roots}
TARBALL=$CACHE/trixie-$ARCH.tar
mkdir -p "$CACHE"
if [ ! -f "$TARBALL" ]; then
  say "making a Debian 13 $ARCH root with nodejs and systemd (once; network to Debian's mirror)"
  t0=$(now)
  mmdebstrap --format=tar --variant=minbase --architectures="$ARCH" --include=nodejs,systemd trixie "$TARBALL.tmp" http://deb.debian.org/debian >&2
  mv "$TARBALL.tmp" "$TARBALL"
  say "root made in $(secs "$t0" "$(now)") s"
fi

WORK=$(mktemp -d /var/tmp/telematics-agent-prove.XXXXXX)
trap 'rm -rf --one-file-system -- "$WORK"' EXIT
R=$WORK/root
mkdir -p "$R"
tar -C "$R" -xf "$TARBALL"
cp "$DEB" "$R/tmp/telematics-agent.deb"
# shellcheck disable=SC2016 # dpkg-query's own ${Version}, not the shell's
nodejs_version=$(chroot "$R" env -i dpkg-query -W -f='${Version}' nodejs)
say "root: Debian $(cat "$R/etc/debian_version"), nodejs $nodejs_version, $(chroot "$R" env -i node -p '"node " + process.version + " ABI " + process.versions.modules + " " + process.arch')"

# Inside: private mounts (gone with the namespace) and a network namespace whose only interface is
# loopback, so the install proves it needs no network and the demo talks to itself only.
cat >"$WORK/inside.sh" <<'INSIDE'
set -euo pipefail
R=$1 MINUTES=$2
ip link set lo up
mount -t proc proc "$R/proc"
mount --rbind /dev "$R/dev"
mount -t tmpfs tmpfs "$R/run"
t0=$(date +%s.%N)
chroot "$R" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 dpkg -i /tmp/telematics-agent.deb
t1=$(date +%s.%N)
echo "INSTALL_SECONDS $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')"
chroot "$R" sh -c 'id telematics-agent && ls -ld /etc/telematics-agent && test -L /etc/systemd/system/multi-user.target.wants/telematics-agent.service && echo "service enabled"'
t0=$(date +%s.%N)
chroot "$R" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 TMPDIR=/tmp telematics-agent demo --minutes "$MINUTES" --speed 8 --keep
t1=$(date +%s.%N)
echo "DEMO_SECONDS $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')"
# Remove keeps the configuration (conffile and config.json) and the data; purge removes both.
chroot "$R" sh -c 'echo "{}" >/etc/telematics-agent/config.json && mkdir -p /var/lib/telematics-agent && echo fixes >/var/lib/telematics-agent/marker'
chroot "$R" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin dpkg -r telematics-agent
chroot "$R" sh -c 'test -f /etc/telematics-agent/config.json && test -f /etc/telematics-agent/config.example.json && test -f /var/lib/telematics-agent/marker && test ! -e /opt/telematics-agent && test ! -e /usr/bin/telematics-agent'
echo "REMOVE_KEEPS_DATA_AND_CONFIGURATION"
chroot "$R" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin dpkg -P telematics-agent
chroot "$R" sh -c 'test ! -e /etc/telematics-agent && test ! -e /var/lib/telematics-agent'
echo "PURGE_REMOVES_THEM"
INSIDE

# The daemon's peak resident size, sampled once a second from outside (under qemu-user it includes
# the emulator and its translated code, so it is an upper bound, not the gateway's figure).
(
  peak=0
  while [ -d "$WORK" ]; do
    # The demo's daemon runs dist/demo/demo-daemon.js; the service's command line
    # (dist/cli/main.js run) matched nothing, and the line said 0 MB.
    for p in $(pgrep -f 'dist/demo/demo-daemon.js' || true); do
      # Only the daemon inside this root, not another one running on the host.
      [ "$(readlink "/proc/$p/root" 2>/dev/null)" = "$R" ] || continue
      r=$(awk '/^VmRSS/ { print $2 }' "/proc/$p/status" 2>/dev/null || echo 0)
      [ "${r:-0}" -le "$peak" ] || peak=$r
    done
    echo "$peak" >"$WORK/peak-rss-kb" 2>/dev/null || break
    sleep 1
  done
) &
sampler=$!

status=0
unshare --mount --net --propagation private -- bash "$WORK/inside.sh" "$R" "$MINUTES" 2>&1 | tee "$WORK/inside.log" || status=$?
kill "$sampler" 2>/dev/null || true
wait "$sampler" 2>/dev/null || true

# From the demo's frames (one each 5 s in a pipe): the daemon's uptime (process age, from its
# status) in the first frame that shows a fix delivered: an upper bound of spawn-to-first-delivery.
first_delivery=$(awk '/uploaded [1-9]/ { seen = 1 } seen && match($0, / up [0-9]+ s/) { print substr($0, RSTART + 4, RLENGTH - 6); exit }' "$WORK/inside.log")
grep -q 'result: every recorded fix delivered exactly once' "$WORK/inside.log" || status=1
grep -q '^PURGE_REMOVES_THEM' "$WORK/inside.log" || status=1
say "figures ($ARCH, Debian 13, under $(
  [ "$ARCH" = amd64 ] && echo 'no emulation' || echo qemu-user
)):"
say "  install (dpkg -i, no network): $(awk '/^INSTALL_SECONDS/ { print $2 }' "$WORK/inside.log") s"
say "  demo ($MINUTES-minute drive at 8x, outage included): $(awk '/^DEMO_SECONDS/ { print $2 }' "$WORK/inside.log") s"
say "  daemon spawn to the first fix delivered: <= ${first_delivery:-?} s (the daemon's uptime in the first frame showing one)"
say "  daemon peak RSS (sampled each second): $(($(cat "$WORK/peak-rss-kb" 2>/dev/null || echo 0) / 1024)) MB"
if [ "$status" -ne 0 ]; then die "the demo did not deliver every fix exactly once, or remove/purge did not keep/remove what they should (above)"; fi
say "PASS: $ARCH package installed offline, delivered every fix exactly once; remove kept the data and configuration, purge removed them"
