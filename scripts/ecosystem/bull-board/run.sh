#!/usr/bin/env bash
# run.sh — run Bull Board's own API test suite (felixmosh/bull-board, packages/api/tests, jest)
# on the published @bull-board/api and @bull-board/express, against BullMQ (IMPL=bullmq, the
# baseline) or against Hopper swapped in the way a migrating user swaps it (IMPL=hopper): the
# `npm pack` tarballs of hopper-queue and hopper-queue-bull-board (with hopper-queue-dashboard and
# hopper-queue-metrics, which it depends on) installed into the work directory, `bullmq` resolved
# to hopper-queue, and Bull Board's BullMQAdapter replaced by HopperAdapter (bullMQAdapter.cjs here).
# No test file is changed.
#
#   BULL_BOARD_GIT=/work/.mirror/felixmosh+bull-board/repo IMPL=hopper scripts/ecosystem/bull-board/run.sh
#
# Env:
#   BULL_BOARD_GIT   git directory of a copy of github.com/felixmosh/bull-board (required)
#   REF=v9.4.0       the revision whose packages/api/tests are run
#   BULL_BOARD_VERSION=9.10.1   the published @bull-board/api, /express and /ui the tests run on
#   IMPL=hopper      hopper | bullmq (the baseline: Bull Board's own BullMQAdapter and bullmq)
#   HOPPER_ROOT      the Hopper repository (default: this script's); run `npm run build` there first
#   WORK=/tmp/bull-board-suite   scratch directory (installs are reused across runs)
#   REDIS_PORT=6393  a private redis-server is started there (never 6379) and stopped at the end
#   TEST_NAME=regex  only the tests whose full name matches (jest -t)
#   TEST_PATH=regex  only the spec files whose path matches (jest's path pattern)
#
# Output: jest's per-test log, then "N passed, N failed, N skipped"; $WORK/results/<impl>.json.
# Exit: 0 every test passed, 1 failures, 2 harness error.
set -uo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
HOPPER_ROOT="${HOPPER_ROOT:-$(cd "$HERE/../../.." && pwd)}"
BULL_BOARD_GIT="${BULL_BOARD_GIT:-}"
REF="${REF:-v9.4.0}"
BULL_BOARD_VERSION="${BULL_BOARD_VERSION:-9.10.1}"
IMPL="${IMPL:-hopper}"
WORK="${WORK:-/tmp/bull-board-suite}"
REDIS_PORT="${REDIS_PORT:-6393}"

die() { echo "[bull-board] ERROR: $*" >&2; exit 2; }
. "$HERE/../lib.sh"
log() { echo "[bull-board] $*" >&2; }

[ -n "$BULL_BOARD_GIT" ] || die "set BULL_BOARD_GIT to the git directory of a copy of github.com/felixmosh/bull-board"
[ "$REDIS_PORT" = "6379" ] && die "refusing REDIS_PORT=6379: the suite uses fixed queue names and obliterates them; use a private instance"
case "$IMPL" in hopper|bullmq) ;; *) die "IMPL must be hopper or bullmq" ;; esac
SHA="$(git --git-dir="$BULL_BOARD_GIT" rev-parse --verify -q "$REF^{commit}")" || die "no revision $REF in $BULL_BOARD_GIT"
command -v redis-server >/dev/null || die "redis-server not found"

# --- 1. the upstream package's tests (and the sources two of them import) ---
mkdir -p "$WORK/results" "$WORK/repo"
rm -rf "$WORK/repo/packages"
git --git-dir="$BULL_BOARD_GIT" archive "$SHA" packages/api | tar -x -C "$WORK/repo" || die "git archive failed"
PKG="$WORK/repo/packages/api"
[ -d "$PKG/tests/api" ] || die "no packages/api/tests/api at $REF"
# The archived package is @bull-board/api itself: renamed, so that '@bull-board/api' in the tests
# resolves to the published package in node_modules, not to this unbuilt copy (jest resolves a
# package's own name to itself).
node -e "
const f = '$PKG/package.json', p = require(f);
p.name = '@bull-board/api-tests';
require('fs').writeFileSync(f, JSON.stringify(p, null, 2));" || die "cannot rename $PKG/package.json"

# --- 2. the suite's tools at the versions it declares, Bull Board from npm, and the implementation ---
DEPS="$(node -e "
const p = require('$PKG/package.json');
const d = { ...p.devDependencies, ...p.dependencies };
for (const n of Object.keys(d)) if (n.startsWith('bullmq-v')) delete d[n]; // the version matrix is not run
d['typescript'] = '5.9.3';
d['@types/node'] = '22';
for (const n of ['api', 'express', 'ui']) d['@bull-board/' + n] = '$BULL_BOARD_VERSION';
console.log(Object.entries(d).map(([n, v]) => n + '@' + v).join(' '));")" || die "cannot read $PKG/package.json"
INSTALL="$DEPS"
rm -rf "$WORK/tarballs" && mkdir -p "$WORK/tarballs"
if [ "$IMPL" = "hopper" ]; then
  pack_packages "$WORK/tarballs" hopper metrics dashboard bull-board
  INSTALL="$INSTALL $(ls "$WORK"/tarballs/*.tgz | tr '\n' ' ')"
fi
cd "$WORK/repo" || die "cannot enter $WORK/repo"
[ -f package.json ] || echo '{ "name": "bull-board-api-suite-work", "private": true, "version": "0.0.0" }' > package.json
STAMP="$IMPL $INSTALL $(cat "$WORK"/tarballs/*.tgz 2>/dev/null | sha1sum | cut -c1-12)"
if [ "$(cat .install-stamp 2>/dev/null)" != "$STAMP" ]; then
  log "npm install (log: $WORK/results/npm-install.log)"
  rm -rf node_modules/hopper-queue node_modules/hopper-queue-*
  # shellcheck disable=SC2086
  npm install --no-audit --no-fund --loglevel=error --no-save --legacy-peer-deps $INSTALL > "$WORK/results/npm-install.log" 2>&1 \
    || { tail -20 "$WORK/results/npm-install.log"; die "npm install failed"; }
  echo "$STAMP" > .install-stamp
fi

# --- 3. the jest config (jest.config.suite.js: upstream's default project, and the swap) ---
CONFIG="$PKG/jest.config.suite.js"
cp "$HERE/jest.config.suite.js" "$CONFIG"
if [ "$IMPL" = "hopper" ]; then
  mkdir -p "$PKG/hopper-swap"
  cp "$HERE/bullMQAdapter.cjs" "$PKG/hopper-swap/bullMQAdapter.cjs"
fi

# --- 4. a private Redis ---
start_private_redis "$REDIS_PORT" "$WORK/results/redis.log"

# --- 5. run (one file at a time: the suite uses fixed queue names) ---
cd "$PKG" || die "cannot enter $PKG"
ARGS=(--config "$CONFIG" --runInBand --verbose --json --outputFile "$WORK/results/$IMPL.json")
[ -n "${TEST_NAME:-}" ] && ARGS+=(-t "$TEST_NAME")
[ -n "${TEST_PATH:-}" ] && ARGS+=("$TEST_PATH")
log "IMPL=$IMPL bull-board $REF ($SHA) tests on @bull-board/api@$BULL_BOARD_VERSION, Redis on 127.0.0.1:$REDIS_PORT"
SUITE_IMPL="$IMPL" REDIS_HOST=127.0.0.1 REDIS_PORT="$REDIS_PORT" timeout --kill-after=30 1800 \
  "$WORK/repo/node_modules/.bin/jest" "${ARGS[@]}" 2>&1 | tee "$WORK/results/$IMPL.log"
RC=${PIPESTATUS[0]}
[ -f "$WORK/results/$IMPL.json" ] || die "jest wrote no results (exit $RC)"
node -e "
const r = require('$WORK/results/$IMPL.json');
console.log(r.numPassedTests + ' passed, ' + r.numFailedTests + ' failed, ' + (r.numPendingTests + r.numTodoTests) + ' skipped (of ' + r.numTotalTests + ')');"
[ "$RC" = "0" ] && exit 0 || exit 1
