# shellcheck shell=bash
# Installing the program for scripts/provision.sh (sourced; uses SOURCE, APP_DIR, NODE, HELPERS,
# say, die).
#
# Why this way: the package compiles TypeScript in `prepare`, which needs the devDependencies.
# The gateway gets the already built dist/ plus package.json and package-lock.json, and runs
# `npm ci --omit=dev --ignore-scripts`: the locked production tree, no compiler, and no install
# script of any package runs. Only the native modules named in package.json "allowScripts"
# (better-sqlite3, @serialport/bindings-cpp) are then made to load: reused from a build of the
# same version (the installed copy, or the source tree), else built by `npm rebuild`. (`npm pack`
# plus `npm install <tarball>` was the alternative; it drops the lockfile and runs every
# dependency's install scripts.)

# The program files a release needs; the rest of a checkout (src, test, bench) stays behind.
# `npm pack` never ships package-lock.json; a release tarball carries its lock as
# npm-shrinkwrap.json, which npm ci reads the same way.
readonly APP_FILES=(dist package.json package-lock.json npm-shrinkwrap.json README.md LICENSE config systemd scripts)

# The lockfile of the app at DIR, if it has one.
app_lockfile() {
  local f
  for f in "$1/npm-shrinkwrap.json" "$1/package-lock.json"; do
    if [ -f "$f" ]; then printf '%s\n' "$f" && return 0; fi
  done
  return 1
}

# A dependency tree can be reused as is when the lockfile, the Node ABI and the platform match.
app_deps_stamp() {
  local dir=$1 lock
  lock=$(app_lockfile "$dir") || lock=$dir/package.json
  printf '%s %s\n' "$(sha256sum <"$lock" | cut -d' ' -f1)" \
    "$("$NODE" -p '"node-abi-" + process.versions.modules + " " + process.platform + "-" + process.arch')"
}

# Prints the native modules of the app at DIR that do not load, one per line; fails only when
# the check itself cannot run.
app_failing_natives() {
  "$NODE" "$HELPERS/native-check.mjs" "$1" 2>/dev/null || die "cannot check the native modules in $1"
}

# Sets the array named by $2 to the native modules of the app at $1 that do not load.
app_read_failing() {
  local list
  list=$(app_failing_natives "$1")
  if [ -n "$list" ]; then mapfile -t "$2" <<<"$list"; else mapfile -t "$2" </dev/null; fi
}

app_module_version() {
  "$NODE" -p 'require(process.argv[1]).version' "$1/package.json" 2>/dev/null
}

# Copies the compiled binary of module M from a donor tree that holds the same version of it.
app_reuse_native() {
  local stage=$1 m=$2 donor want
  want=$(app_module_version "$stage/node_modules/$m")
  for donor in "$APP_DIR/node_modules/$m" "$SOURCE/node_modules/$m"; do
    if [ -z "$want" ] || [ "$(app_module_version "$donor")" != "$want" ]; then continue; fi
    compgen -G "$donor/build/Release/*.node" >/dev/null || continue
    mkdir -p "$stage/node_modules/$m/build/Release"
    cp "$donor"/build/Release/*.node "$stage/node_modules/$m/build/Release/"
    local -a still
    app_read_failing "$stage" still
    if [[ " ${still[*]} " != *" $m "* ]]; then
      say "native module $m: reusing the $want build from ${donor%/node_modules/*}"
      return 0
    fi
    rm -f "$stage/node_modules/$m"/build/Release/*.node
  done
  return 1
}

app_make_natives_load() {
  local stage=$1 m
  local -a failing rebuild=()
  app_read_failing "$stage" failing
  for m in "${failing[@]}"; do
    app_reuse_native "$stage" "$m" || rebuild+=("$m")
  done
  [ "${#rebuild[@]}" -eq 0 ] && return 0
  say "building native modules: ${rebuild[*]} (fetches a prebuilt binary, or compiles: that can take 10 minutes or more on a Raspberry Pi)"
  (cd "$stage" && npm rebuild "${rebuild[@]}" --foreground-scripts --no-audit --no-fund) ||
    die "npm could not build ${rebuild[*]}. Give the gateway access to github.com (prebuilt binaries), or install a compiler: apt-get install build-essential python3"
  app_read_failing "$stage" failing
  if [ "${#failing[@]}" -gt 0 ]; then
    "$NODE" "$HELPERS/native-check.mjs" "$stage" >/dev/null || true
    die "native modules still do not load after the build: ${failing[*]} (details above)"
  fi
}

# Builds a complete, tested copy of the program in STAGE; the installed one is not touched.
app_stage() {
  local stage=$1 f stamp
  rm -rf "$stage"
  mkdir -p "$stage"
  for f in "${APP_FILES[@]}"; do
    if [ -e "$SOURCE/$f" ]; then cp -R "$SOURCE/$f" "$stage/"; fi
  done
  stamp=$(app_deps_stamp "$stage")
  if [ -d "$APP_DIR/node_modules" ] && [ "$(cat "$APP_DIR/.deps-stamp" 2>/dev/null)" = "$stamp" ]; then
    say "dependencies unchanged since the installed version: reusing them (no download)"
    cp -a "$APP_DIR/node_modules" "$stage/"
  else
    local -a npm_install=(ci)
    if ! app_lockfile "$stage" >/dev/null; then
      warn "$SOURCE has no lockfile: dependencies resolve to the newest matching versions"
      npm_install=(install --no-package-lock)
    fi
    say "installing production dependencies (npm ${npm_install[*]} --omit=dev --ignore-scripts)"
    (cd "$stage" && npm "${npm_install[@]}" --omit=dev --ignore-scripts --no-audit --no-fund --loglevel=error) ||
      die "npm could not install the dependencies (see above); check the network, or the npm cache when offline"
  fi
  app_make_natives_load "$stage"
  printf '%s\n' "$stamp" >"$stage/.deps-stamp"
  local version want
  want=$(app_module_version "$stage")
  version=$("$NODE" "$stage/dist/cli/main.js" --version 2>&1) || true
  [ "$version" = "$want" ] || die "the staged program does not start (--version said \"$version\", expected $want); is $SOURCE/dist complete?"
  say "staged telematics-agent $version"
}

# Replaces the installed program with the staged one; the old tree survives until the new one
# is in place, so an interrupted run can be repeated.
app_swap() {
  local stage=$1
  rm -rf "$APP_DIR.old"
  if [ -d "$APP_DIR" ]; then mv "$APP_DIR" "$APP_DIR.old"; fi
  mv "$stage" "$APP_DIR"
  rm -rf "$APP_DIR.old"
}
