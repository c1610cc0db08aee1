# shellcheck shell=bash
# Installing from a Debian package for scripts/provision.sh (sourced; uses ROOT, STAGE, APP,
# APP_DIR, NODE, say, die, usage_error). The package (`npm run package -- --arch ARCH`) carries
# the program with native modules built for one architecture and Node ABI, the unit, the sysusers
# and tmpfiles entries; dpkg installs it with no network and no compiler. provision.sh then only
# writes the configuration and the password, and starts the service.

# PACKAGE_MODE: '' (a checkout, the program staged with npm), file (--package FILE) or installed
# (provision.sh run from an installed package: configuration only).
PACKAGE_MODE=''

# The Debian architecture of an ELF file, from its header: class, machine and ARM float ABI.
elf_debian_arch() {
  local h
  h=$(od -An -v -tx1 -N40 -- "$1" 2>/dev/null | tr -d ' \n') || return 1
  [ "${h:0:8}" = 7f454c46 ] || return 1
  case ${h:8:2}:${h:38:2}${h:36:2} in
    02:003e) echo amd64 ;;
    02:00b7) echo arm64 ;;
    01:0028)
      # e_flags (little endian, bytes 36-39): EABI 5 with the hard-float bit 0x400.
      if [ "${h:78:2}" = 05 ] && (((16#${h:74:2} & 4) != 0)); then echo armhf; else echo armel; fi
      ;;
    *) echo "unknown-${h:38:2}${h:36:2}" ;;
  esac
}

# The architecture of the system a run installs into: --arch, else read from the image's own
# programs under --root, else this machine's.
target_arch() {
  local f
  if [ -n "$TARGET_ARCH" ]; then
    echo "$TARGET_ARCH"
  elif [ -n "$ROOT" ]; then
    for f in "$ROOT/usr/bin/dpkg" "$ROOT/usr/bin/env" "$ROOT/usr/bin/ls"; do
      if [ -f "$f" ] && elf_debian_arch "$f"; then return 0; fi
    done
    return 1
  else
    dpkg --print-architecture 2>/dev/null || elf_debian_arch /usr/bin/env
  fi
}

# Refuses a package that is not telematics-agent or not of the target's architecture, and
# unpacks it into the staging directory: its program checks the configuration before anything
# changes, and SOURCE points at it.
package_preflight() {
  local name arch target
  [ -r "$PACKAGE_FILE" ] || usage_error "--package $PACKAGE_FILE: cannot read it"
  command -v dpkg-deb >/dev/null || die "dpkg-deb not found: --package needs Debian's dpkg"
  name=$(dpkg-deb -f "$PACKAGE_FILE" Package 2>/dev/null) || usage_error "--package $PACKAGE_FILE is not a Debian package"
  [ "$name" = telematics-agent ] || usage_error "--package $PACKAGE_FILE is the package $name, not telematics-agent"
  arch=$(dpkg-deb -f "$PACKAGE_FILE" Architecture)
  target=$(target_arch) || usage_error "cannot tell the architecture of $ROOT (no /usr/bin/dpkg there): pass --arch arm64|armhf|amd64"
  [ "$arch" = "$target" ] || usage_error "--package $PACKAGE_FILE is for $arch, but ${ROOT:-this machine} is $target: use telematics-agent_*_$target.deb (npm run package -- --arch $target)"
  mkdir -p "$STAGE/pkg"
  dpkg-deb -x "$PACKAGE_FILE" "$STAGE/pkg"
  SOURCE=$STAGE/pkg$APP
  # shellcheck disable=SC2034 # read by provision.sh and lib-service.sh
  PACKAGE_MODE='file'
  PACKAGE_ARCH=$arch
}

# On the target itself the package's node must be one its native modules were built for: node-abi
# has a line "MAJOR ABI" for each.
package_check_node() {
  local have majors abis
  [ -z "$ROOT" ] || return 0
  have=$("$NODE" -p process.versions.modules)
  awk -v abi="$have" '$2 == abi { found = 1 } END { exit !found }' "$SOURCE/node-abi" && return 0
  majors=$(awk '{ printf "%s%s", (NR > 1 ? ", " : ""), $1 }' "$SOURCE/node-abi" | sed 's/, \([0-9]*\)$/ or \1/')
  abis=$(awk '{ printf "%s%s", (NR > 1 ? ", " : ""), $2 }' "$SOURCE/node-abi")
  die "telematics-agent runs on Node $majors (ABI $abis); $NODE is $("$NODE" --version) (ABI $have)"
}

# A checkout that was installed before (not by dpkg) leaves a program tree, a unit in
# /etc/systemd/system that would hide the package's, and a command wrapper ahead on PATH.
package_remove_checkout_install() {
  local f
  if [ -d "$APP_DIR" ] && [ ! -f "$ROOT/var/lib/dpkg/info/telematics-agent.list" ]; then
    say "replacing the program installed from a checkout with the package"
    rm -rf -- "$APP_DIR"
  fi
  if [ -f "$ROOT$CLI" ] && grep -q 'Written by provision.sh' "$ROOT$CLI"; then rm -f -- "$ROOT$CLI"; fi
  for f in "$UNIT_FILE" "$SYSUSERS_FILE" "$TMPFILES_FILE" "$MODULES_FILE"; do
    if [ -f "$ROOT$f" ]; then rm -f -- "$ROOT$f" && record removed "$f"; fi
  done
}

# dpkg -i, on this machine or inside the image (chroot: its programs are of the target's
# architecture, so a PC runs them through qemu-user-static and binfmt_misc).
package_install() {
  package_remove_checkout_install
  if [ -z "$ROOT" ]; then
    say "installing $(basename -- "$PACKAGE_FILE") (dpkg -i, no network)"
    TELEMATICS_AGENT_PROVISIONING=1 dpkg -i "$PACKAGE_FILE" || die "dpkg could not install $PACKAGE_FILE (above); a missing nodejs: apt-get install nodejs"
    return 0
  fi
  chroot "$ROOT" /bin/true 2>/dev/null ||
    die "cannot run the programs of $ROOT ($PACKAGE_ARCH) on this machine: apt-get install qemu-user-static binfmt-support, then run again"
  local inside=/var/cache/telematics-agent.deb
  cp -- "$PACKAGE_FILE" "$ROOT$inside"
  say "installing $(basename -- "$PACKAGE_FILE") into $ROOT (chroot dpkg -i)"
  chroot "$ROOT" env TELEMATICS_AGENT_PROVISIONING=1 dpkg -i "$inside" || {
    rm -f -- "$ROOT$inside"
    die "dpkg could not install the package into $ROOT (above); the image needs nodejs first: chroot $ROOT apt-get install nodejs"
  }
  rm -f -- "$ROOT$inside"
  record run "dpkg -i $(basename -- "$PACKAGE_FILE")"
}

# Under --root from a checkout: its native modules are this machine's; an image of another
# architecture gets the package of its own.
refuse_foreign_image() {
  local target host
  host=$(TARGET_ARCH='' ROOT='' target_arch)
  if ! target=$(target_arch); then
    # An empty directory (a tree to copy later): nothing to read, so this machine's is assumed.
    warn "cannot tell the architecture of $ROOT (no /usr/bin/dpkg there): assuming this machine's ($host); pass --arch for an image of another"
    return 0
  fi
  [ "$target" = "$host" ] || usage_error "$ROOT is $target but this machine is $host: its native modules would not load there. Build the package for it (npm run package -- --arch $target) and pass --package FILE"
}

# Under --root the package's postinst created the user in the image: the owners the manifest
# records are applied there (chown inside the image resolves the image's own user), so the copied
# card is right before its first boot, not only after systemd-tmpfiles-setup.
package_apply_owners() {
  local kind target owner
  while IFS=$'\t' read -r kind target _ owner; do
    case $kind in file | dir) chroot "$ROOT" chown "$owner" "$target" ;; esac
  done <"$MANIFEST"
}
