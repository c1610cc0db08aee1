#!/usr/bin/env bash
# Runs a part of the suite on the other Node majors users have (NodeSource: 22, 24, 26), beside the
# full suite on the machine's Node (Debian 13: 20). The official binaries come from the npm
# registry (scripts/node-releases.sh), better-sqlite3 is compiled for each against the headers they
# ship (npm_config_nodedir), in a copy of the checkout, so the machine's own node_modules build stays.
#
#   bash .ci/node-versions.sh                          # 22, 24, 26: test/platform test/upload test/store
#   bash .ci/node-versions.sh --prepare                # only fetch them and compile better-sqlite3
#   NODE_VERSIONS=24.22.3 bash .ci/node-versions.sh test/e2e
#   NODE_VERSIONS_RESULTS=DIR: each version's vitest JSON report in DIR/node-VERSION.json
#
# The binaries live under /opt (scripts/node-releases.sh says why). A compiled better-sqlite3 is
# kept there too, by its version and Node's ABI, so a second run on the same machine skips the
# two-minute compile, and `npm run package` for amd64 takes it from there. --prepare, before the
# full suite, is what lets test/field/package.test.ts build the package without compiling.
# Exits non-zero if any version fails.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
# shellcheck source=scripts/node-releases.sh
. "$repo/scripts/node-releases.sh"
versions="${NODE_VERSIONS:-$NODE_RELEASES}"
root="$NODE_RELEASES_DIR"
prepare_only=''
if [ "${1-}" = --prepare ]; then prepare_only=1 && shift; fi
tests=("$@")
[ "${#tests[@]}" -gt 0 ] || tests=(test/platform test/upload test/store)
# NODE_VERSIONS_EXCLUDE=GLOB leaves test files out (vitest --exclude).
exclude="${NODE_VERSIONS_EXCLUDE-}"
excluded=()
[ -z "$exclude" ] || excluded=(--exclude "$exclude")
case "$(uname -m)" in x86_64 | aarch64) ;; *)
  echo "node-versions: no official Node package for $(uname -m), skipped"
  exit 0
  ;;
esac

mkdir -p "$root"
bsq_version="$(node -p 'require(process.argv[1]).version' "$repo/node_modules/better-sqlite3/package.json")"
failed=()
for v in $versions; do
  node_dir="$(node_release "$v")"
  node_bin="$node_dir/bin/node"
  abi="$("$node_bin" -p process.versions.modules)"

  work="$(mktemp -d "${TMPDIR:-/tmp}/ta-node$v.XXXXXX")"
  # The checkout without .git, its own node_modules, and ../shared beside it as in the repository.
  mkdir "$work/repo"
  tar -C "$repo" --exclude=./.git --exclude=./node_modules -cf - . | tar -C "$work/repo" -xf -
  cp -a "$(readlink -f "$repo/node_modules")" "$work/repo/node_modules"
  [ -e "$repo/../shared" ] && ln -s "$(readlink -f "$repo/../shared")" "$work/shared"

  cached="$root/better-sqlite3-$bsq_version-abi$abi.node"
  built="$work/repo/node_modules/better-sqlite3/build/Release/better_sqlite3.node"
  if [ -f "$cached" ]; then
    echo "node-versions: node $v (ABI $abi): better-sqlite3 $bsq_version from $cached"
    cp "$cached" "$built"
  else
    echo "node-versions: node $v (ABI $abi): compiling better-sqlite3 $bsq_version (about two minutes on two cores)"
    start=$SECONDS
    (cd "$work/repo/node_modules/better-sqlite3" &&
      PATH="$node_dir/bin:$PATH" npm_config_nodedir="$node_dir" JOBS=max npm run --silent build-release >"$work/gyp.log" 2>&1) ||
      {
        tail -40 "$work/gyp.log"
        echo "node-versions: node $v: better-sqlite3 did not compile"
        failed+=("$v")
        rm -rf "$work"
        continue
      }
    echo "node-versions: compiled in $((SECONDS - start)) s"
    cp "$built" "$cached.part" && mv "$cached.part" "$cached"
  fi
  if [ -n "$prepare_only" ]; then
    rm -rf "$work"
    continue
  fi

  echo "node-versions: node $("$node_bin" --version): vitest run ${tests[*]}"
  report=()
  [ -z "${NODE_VERSIONS_RESULTS:-}" ] || report=(--reporter=default --reporter=json "--outputFile.json=$NODE_VERSIONS_RESULTS/node-$v.json")
  if ! (cd "$work/repo" && PATH="$node_dir/bin:$PATH" "$node_bin" node_modules/vitest/vitest.mjs run "${excluded[@]}" "${report[@]}" "${tests[@]}"); then
    failed+=("$v")
  fi
  rm -rf "$work"
done

if [ "${#failed[@]}" -gt 0 ]; then
  echo "node-versions: failed on node ${failed[*]}"
  exit 1
fi
if [ -n "$prepare_only" ]; then echo "node-versions: node $versions and their better-sqlite3 ready in $root"; else echo "node-versions: passed on node $versions"; fi
