# shellcheck shell=sh
# Included into preinst and postinst by scripts/package-deb.sh (maintainer scripts are single
# files). The native modules (better-sqlite3) load only into a Node of the ABI they were built for:
# refuse any other node here, with what to do, rather than a NODE_MODULE_VERSION stack trace at start.
WANT_ABI=@ABI@
node_abi_check() {
  # Into an image without chrooting (DPKG_ROOT), the image's node cannot run here.
  [ -z "${DPKG_ROOT:-}" ] || return 0
  [ -x /usr/bin/node ] || return "${1:-0}"
  have=$(/usr/bin/node -p process.versions.modules 2>/dev/null) || have=unknown
  [ "$have" != "$WANT_ABI" ] || return 0
  version=$(/usr/bin/node --version 2>/dev/null) || version=unknown
  cat >&2 <<MSG
telematics-agent: /usr/bin/node is $version (Node ABI $have); this package's native modules are
built for ABI $WANT_ABI: Node.js 20, as Debian 13 ships it (apt-get install nodejs/trixie).
Install Debian's nodejs 20.19 or later 20.x (not NodeSource 22/24), or build the package for your
Node from a checkout (README, "Installing on a gateway"). Nothing was started.
MSG
  return 1
}
