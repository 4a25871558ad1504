#!/usr/bin/env bash
# run.sh — run @nestjs/bullmq's own e2e suite (nestjs/bull, packages/bullmq/e2e) against
# @nestjs/bullmq + bullmq (IMPL=bullmq, the baseline) or against Hopper's packages the way a
# migrating user swaps them in (IMPL=hopper): `npm pack` tarballs of hopper-queue and
# hopper-queue-nestjs installed into the work directory, and vitest aliases sending the suite's
# `../lib/index.js` (and `@nestjs/bullmq`) to hopper-queue-nestjs and `bullmq` to hopper-queue.
# The test file itself is not changed, except its Redis port (a private redis-server).
#
#   NESTJS_BULL_GIT=/work/.mirror/nestjs+bull/repo IMPL=hopper scripts/ecosystem/nestjs-bullmq/run.sh
#
# Env:
#   NESTJS_BULL_GIT  git directory of a copy of github.com/nestjs/bull (required)
#   REF=3b07d26      the revision whose packages/bullmq/e2e is run
#   IMPL=hopper      hopper | bullmq (the baseline: the suite's own lib and bullmq)
#   HOPPER_ROOT      the Hopper repository (default: this script's); run `npm run build` there first
#   WORK=/tmp/nestjs-bullmq-suite   scratch directory (installs are reused across runs)
#   REDIS_PORT=6392  a private redis-server is started there (never 6379) and stopped at the end
#   TEST_NAME=regex  only the tests whose full name matches (vitest -t)
#
# Output: vitest's per-test log, then "N passed, N failed, N skipped"; $WORK/results/<impl>.json.
# Exit: 0 every test passed, 1 failures, 2 harness error.
set -uo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
HOPPER_ROOT="${HOPPER_ROOT:-$(cd "$HERE/../../.." && pwd)}"
NESTJS_BULL_GIT="${NESTJS_BULL_GIT:-}"
REF="${REF:-3b07d26}"
IMPL="${IMPL:-hopper}"
WORK="${WORK:-/tmp/nestjs-bullmq-suite}"
REDIS_PORT="${REDIS_PORT:-6392}"

die() { echo "[nestjs-bullmq] ERROR: $*" >&2; exit 2; }
. "$HERE/../lib.sh"
log() { echo "[nestjs-bullmq] $*" >&2; }

[ -n "$NESTJS_BULL_GIT" ] || die "set NESTJS_BULL_GIT to the git directory of a copy of github.com/nestjs/bull"
[ "$REDIS_PORT" = "6379" ] && die "refusing REDIS_PORT=6379: the suite uses fixed queue names; use a private instance"
case "$IMPL" in hopper|bullmq) ;; *) die "IMPL must be hopper or bullmq" ;; esac
SHA="$(git --git-dir="$NESTJS_BULL_GIT" rev-parse --verify -q "$REF^{commit}")" || die "no revision $REF in $NESTJS_BULL_GIT"
command -v redis-server >/dev/null || die "redis-server not found"

# --- 1. the upstream package (its lib, its e2e suite, its configs) ---
mkdir -p "$WORK/results"
rm -rf "$WORK/repo/packages"
mkdir -p "$WORK/repo"
git --git-dir="$NESTJS_BULL_GIT" archive "$SHA" packages/bullmq packages/bull-shared packages/tsconfig.build.json \
  | tar -x -C "$WORK/repo" || die "git archive failed"
PKG="$WORK/repo/packages/bullmq"
SPEC="$PKG/e2e/module.e2e-spec.ts"
[ -f "$SPEC" ] || die "no packages/bullmq/e2e/module.e2e-spec.ts at $REF"
# The one change to the suite: its Redis port (6380 upstream, a docker-compose service).
sed -i "s/port: 6380/port: $REDIS_PORT/g" "$SPEC"

# --- 2. the suite's tools at the versions it pins, and the implementation under test ---
DEPS="$(node -e "
const p = require('$PKG/package.json');
const d = { ...p.devDependencies, tslib: p.dependencies.tslib, vitest: '4.1.11' };
console.log(Object.entries(d).map(([n, v]) => n + '@' + v).join(' '));")"
INSTALL="$DEPS"
if [ "$IMPL" = "hopper" ]; then
  for p in hopper nestjs; do
    [ -d "$HOPPER_ROOT/packages/$p/dist" ] || die "packages/$p/dist missing: run npm run build in $HOPPER_ROOT"
  done
  rm -rf "$WORK/tarballs" && mkdir -p "$WORK/tarballs"
  pack_packages "$WORK/tarballs" hopper nestjs
  INSTALL="$INSTALL $(ls "$WORK"/tarballs/*.tgz | tr '\n' ' ')"
fi
cd "$WORK/repo" || die "cannot enter $WORK/repo"
[ -f package.json ] || echo '{ "name": "nestjs-bullmq-suite-work", "private": true, "version": "0.0.0" }' > package.json
STAMP="$INSTALL $(cat "$WORK"/tarballs/*.tgz 2>/dev/null | sha1sum | cut -c1-12)"
if [ "$(cat .install-stamp 2>/dev/null)" != "$STAMP" ]; then
  log "npm install (log: $WORK/results/npm-install.log)"
  # shellcheck disable=SC2086
  npm install --no-audit --no-fund --loglevel=error --no-save $INSTALL > "$WORK/results/npm-install.log" 2>&1 \
    || { tail -20 "$WORK/results/npm-install.log"; die "npm install failed"; }
  echo "$STAMP" > .install-stamp
fi

# --- 3. the vitest config: upstream's e2e config, plus the swap for IMPL=hopper ---
CONFIG="$PKG/vitest.config.e2e.mts"
if [ "$IMPL" = "hopper" ]; then
  CONFIG="$PKG/vitest.config.e2e-hopper.mjs"
  cp "$HERE/vitest.config.e2e-hopper.mjs" "$CONFIG"
fi

# --- 4. a private Redis ---
start_private_redis "$REDIS_PORT" "$WORK/results/redis.log"

# --- 5. run ---
cd "$PKG" || die "cannot enter $PKG"
ARGS=(run --config "$CONFIG" --reporter verbose --reporter json --outputFile.json "$WORK/results/$IMPL.json")
[ -n "${TEST_NAME:-}" ] && ARGS+=(-t "$TEST_NAME")
log "IMPL=$IMPL nestjs/bull $SHA, Redis on 127.0.0.1:$REDIS_PORT"
timeout --kill-after=30 900 "$WORK/repo/node_modules/.bin/vitest" "${ARGS[@]}" 2>&1 | tee "$WORK/results/$IMPL.log"
RC=${PIPESTATUS[0]}
[ -f "$WORK/results/$IMPL.json" ] || die "vitest wrote no results (exit $RC)"
node -e "
const r = require('$WORK/results/$IMPL.json');
console.log(r.numPassedTests + ' passed, ' + r.numFailedTests + ' failed, ' + (r.numPendingTests + r.numTodoTests) + ' skipped (of ' + r.numTotalTests + ')');"
[ "$RC" = "0" ] && exit 0 || exit 1
