#!/usr/bin/env bash
# Makes a fleet's own signed apt repository from the packages in release/ (where `npm run package`
# writes them): pool/, dists/SUITE/main/binary-ARCH/Packages for each architecture, and
# dists/SUITE/Release signed twice (InRelease, Release.gpg), with apt-ftparchive and gpg. Serve DIR
# as it is over HTTPS (or copy it); gateways name it in a deb822 .sources entry with Signed-By
# (docs/installing.md, "Updates from the fleet's own apt repository").
#
#   npm run repo -- --key KEY [--out DIR] [--from DIR] [--origin NAME] [--suite NAME]
#
# KEY: the fingerprint (or an id or user id that names one key) of a gpg key whose secret part is in
# gpg's keyring (GNUPGHOME); the repository is signed with it and its public part is written to
# DIR/fleet-archive-key.asc for the gateways. DIR defaults to release/apt, --from to release/,
# --origin to telematics-agent, --suite to stable. Packages already in DIR's pool stay (a gateway
# can go back to one); a package of the same name with other content is refused.
# Needs apt-ftparchive (apt-get install apt-utils) and gpg. Why these: docs/decisions/apt-repository.md.
set -euo pipefail
umask 022

KEY='' OUT_DIR='' FROM_DIR='' ORIGIN=telematics-agent SUITE=stable
usage='usage: npm run repo -- --key KEY [--out DIR] [--from DIR] [--origin NAME] [--suite NAME]'
while [ $# -gt 0 ]; do
  case $1 in
    --key | --out | --from | --origin | --suite)
      [ $# -ge 2 ] || { echo "repo: $1 needs a value ($usage)" >&2 && exit 2; }
      case $1 in --key) KEY=$2 ;; --out) OUT_DIR=$2 ;; --from) FROM_DIR=$2 ;; --origin) ORIGIN=$2 ;; --suite) SUITE=$2 ;; esac
      shift 2
      ;;
    -h | --help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//' && exit 0 ;;
    *) echo "repo: unknown argument $1 ($usage)" >&2 && exit 2 ;;
  esac
done

die() {
  printf 'repo: error: %s\n' "$*" >&2
  exit 1
}
say() { printf 'repo: %s\n' "$*" >&2; }

[ -n "$KEY" ] || die "--key is required: the fingerprint of the gpg key that signs the repository (gpg --list-secret-keys shows the keys whose secret part this machine holds)"
# Names go into Release and into the gateways' unattended-upgrades pattern: keep them plain.
[[ $ORIGIN =~ ^[A-Za-z0-9][A-Za-z0-9.+_-]*$ ]] || die "--origin must be letters, digits and . + _ - (got \"$ORIGIN\")"
[[ $SUITE =~ ^[a-z0-9][a-z0-9.+_-]*$ ]] || die "--suite must be lower-case letters, digits and . + _ - (got \"$SUITE\")"
command -v apt-ftparchive >/dev/null || die "apt-ftparchive not found: apt-get install apt-utils"
command -v gpg >/dev/null || die "gpg not found: apt-get install gpg"
command -v dpkg-deb >/dev/null || die "dpkg-deb not found: apt-get install dpkg"

ROOT_DIR=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT_DIR"
FROM_DIR=${FROM_DIR:-release}
OUT_DIR=${OUT_DIR:-release/apt}

# --- The key: one, known, with its secret part here ----------------------------------------------
# gpg's machine-readable listing: "fpr" lines carry the fingerprint in field 10; the first after a
# "pub" (or "sec") line is the primary key's.
fingerprints() { gpg --batch --with-colons "$@" 2>/dev/null | awk -F: '$1 == "pub" || $1 == "sec" { want = 1 } $1 == "fpr" && want { print $10; want = 0 }'; }
keyring=${GNUPGHOME:-$HOME/.gnupg}
public=$(fingerprints --list-keys -- "$KEY" || true)
[ -n "$public" ] || die "gpg knows no key \"$KEY\" (keyring $keyring): import the fleet's signing key (gpg --import) or name another with --key"
[ "$(printf '%s\n' "$public" | wc -l)" -eq 1 ] ||
  die "\"$KEY\" names $(printf '%s\n' "$public" | wc -l) keys in $keyring ($(printf '%s\n' "$public" | paste -sd, -)): give the fingerprint of the one that signs"
FPR=$public
secret=$(fingerprints --list-secret-keys -- "$FPR" || true)
[ "$secret" = "$FPR" ] ||
  die "gpg has only the public part of key $FPR (keyring $keyring): signing needs its secret part; import it on this machine (gpg --import the secret key) or sign where it is kept"

# --batch: a key that needs a passphrase fails here instead of waiting at a prompt nobody sees;
# tried once before anything is written.
sign() { gpg --batch --yes --local-user "$FPR" --digest-algo SHA512 "$@"; }
echo probe | sign --clearsign >/dev/null 2>&1 ||
  die "gpg could not sign with key $FPR (a passphrase? unlock it in gpg-agent first, e.g. by signing something once with gpg --sign, or sign where the agent holds it)"

# --- The packages ---------------------------------------------------------------------------------
shopt -s nullglob
debs=("$FROM_DIR"/telematics-agent_*.deb)
[ "${#debs[@]}" -gt 0 ] || die "no telematics-agent_*.deb in $FROM_DIR: build them first (npm run package -- --arch arm64|armhf|amd64)"

mkdir -p "$OUT_DIR"
OUT=$(cd "$OUT_DIR" && pwd)
POOL=pool/main/t/telematics-agent
mkdir -p "$OUT/$POOL"
start=$(date +%s.%N)
for deb in "${debs[@]}"; do
  [ "$(dpkg-deb -f "$deb" Package)" = telematics-agent ] || die "$deb is not a telematics-agent package"
  name=$(basename -- "$deb")
  if [ -f "$OUT/$POOL/$name" ]; then
    # A version once published is what gateways may have cached and verified: it never changes.
    cmp -s "$deb" "$OUT/$POOL/$name" ||
      die "$OUT/$POOL/$name is already published with other content: a published version never changes; raise the version in package.json and build again"
  else
    cp -- "$deb" "$OUT/$POOL/$name.tmp" && mv -- "$OUT/$POOL/$name.tmp" "$OUT/$POOL/$name"
  fi
done

# --- Indexes, Release, signatures (written beside, then moved in: never a half-made index) --------
WORK=$(mktemp -d "$OUT/.repo.XXXXXX")
trap 'rm -rf -- "$WORK"' EXIT
archs=$(for d in "$OUT/$POOL"/*.deb; do dpkg-deb -f "$d" Architecture; done | sort -u)
mkdir -p "$WORK/dists/$SUITE/main"
for arch in $archs; do
  bin=$WORK/dists/$SUITE/main/binary-$arch
  mkdir -p "$bin"
  # From OUT, so that each Filename is relative to the repository's root as apt asks for it.
  (cd "$OUT" && apt-ftparchive --arch "$arch" packages "$POOL") >"$bin/Packages"
  gzip -9n <"$bin/Packages" >"$bin/Packages.gz"
  xz -9 <"$bin/Packages" >"$bin/Packages.xz"
done
# Origin and Label are what unattended-upgrades' Origins-Pattern matches; Suite and Codename alike,
# so that a gateway may name either.
apt-ftparchive \
  -o "APT::FTPArchive::Release::Origin=$ORIGIN" \
  -o "APT::FTPArchive::Release::Label=$ORIGIN" \
  -o "APT::FTPArchive::Release::Suite=$SUITE" \
  -o "APT::FTPArchive::Release::Codename=$SUITE" \
  -o "APT::FTPArchive::Release::Architectures=$(echo "$archs" | paste -sd' ' -)" \
  -o "APT::FTPArchive::Release::Components=main" \
  -o "APT::FTPArchive::Release::Description=telematics-agent for the gateways of $ORIGIN" \
  release "$WORK/dists/$SUITE" >"$WORK/Release"
mv "$WORK/Release" "$WORK/dists/$SUITE/Release"
sign --clearsign --output "$WORK/dists/$SUITE/InRelease" "$WORK/dists/$SUITE/Release" ||
  die "gpg could not sign with key $FPR"
sign --armor --detach-sign --output "$WORK/dists/$SUITE/Release.gpg" "$WORK/dists/$SUITE/Release" ||
  die "gpg could not sign with key $FPR"
# The public part only, for the gateways' Signed-By (never the secret: gpg --export writes none).
gpg --batch --armor --export -- "$FPR" >"$WORK/fleet-archive-key.asc"

rm -rf -- "$OUT/dists/$SUITE.old"
[ ! -d "$OUT/dists/$SUITE" ] || mv -- "$OUT/dists/$SUITE" "$OUT/dists/$SUITE.old"
mkdir -p "$OUT/dists"
mv -- "$WORK/dists/$SUITE" "$OUT/dists/$SUITE"
mv -- "$WORK/fleet-archive-key.asc" "$OUT/fleet-archive-key.asc"
rm -rf -- "$OUT/dists/$SUITE.old"

count=$(find "$OUT/$POOL" -name '*.deb' | wc -l)
say "$count package(s) for $(echo "$archs" | paste -sd' ' -) in $OUT, signed by $FPR in $(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s"
say "gateways: a deb822 .sources entry with Suites: $SUITE, Components: main, Signed-By: the content of $OUT/fleet-archive-key.asc (docs/installing.md)"
printf '%s\n' "$OUT"
