# shellcheck shell=sh
# Included into preinst and postinst by scripts/package-deb.sh (maintainer scripts are single
# files). better-sqlite3 loads only into a Node of an ABI it was built for, and the package carries
# a build for each Node major it serves: refuse any other node here, in one sentence naming it and
# the set, rather than a NODE_MODULE_VERSION stack trace at start.
WANT_ABIS='@ABIS@'
node_abi_check() {
  # Into an image without chrooting (DPKG_ROOT), the image's node cannot run here.
  [ -z "${DPKG_ROOT:-}" ] || return 0
  [ -x /usr/bin/node ] || return "${1:-0}"
  have=$(/usr/bin/node -p process.versions.modules 2>/dev/null) || have=unknown
  for abi in $WANT_ABIS; do [ "$have" != "$abi" ] || return 0; done
  version=$(/usr/bin/node --version 2>/dev/null) || version=unknown
  echo "telematics-agent runs on @SUPPORTED@; /usr/bin/node is $version (ABI $have)" >&2
  return 1
}
