#!/usr/bin/env bash
# Tools the field tests need (test/field): shellcheck for scripts/provision.sh, systemd-analyze
# (Debian's systemd package) for the unit's verify and security checks, and apt-ftparchive
# (apt-utils) and gpg for the apt repository (scripts/apt-repo.sh, test/field/apt-repo.test.ts).
# Installs only what is missing; `apt-get update` runs only then.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive

missing=()
command -v shellcheck >/dev/null 2>&1 || missing+=(shellcheck)
# The systemd package brings systemd-analyze and systemd-sysusers. In a container it only adds
# files: package scripts do not start a service manager that is not running.
command -v systemd-analyze >/dev/null 2>&1 || missing+=(systemd)
command -v socat >/dev/null 2>&1 || missing+=(socat)
command -v apt-ftparchive >/dev/null 2>&1 || missing+=(apt-utils)
command -v gpg >/dev/null 2>&1 || missing+=(gpg)
[ "${#missing[@]}" -gt 0 ] || exit 0

if ! command -v apt-get >/dev/null 2>&1; then
  echo "field-deps: missing ${missing[*]} and no apt-get here; the field tests will skip what needs them" >&2
  exit 0
fi
echo "field-deps: installing ${missing[*]}"
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
