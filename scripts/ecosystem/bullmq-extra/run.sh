#!/usr/bin/env bash
# run.sh — run bullmq-extra's own Jest suite (github.com/noamico/bullmq-extra, 22 tests at e0c5ff8;
# ts-jest with type checking on) against BullMQ (IMPL=bullmq, the baseline: the versions its lock
# file pins) or against Hopper (IMPL=hopper), swapped in the way a migrating user swaps it: the
# `npm pack` tarball of hopper-queue installed as `bullmq` (`npm install bullmq@file:<tarball>`).
# The code under test and its tests are not changed. The harness changes one thing: `testcontainers`
# (a Docker Redis per test file) is a stub pointing at a private redis-server (jest.config.harness.cjs).
#
#   BULLMQ_EXTRA_GIT=/work/.mirror/noamico+bullmq-extra/repo IMPL=hopper scripts/ecosystem/bullmq-extra/run.sh
#
# Env:
#   BULLMQ_EXTRA_GIT  git directory of a copy of github.com/noamico/bullmq-extra (required)
#   REF=e0c5ff8       the revision whose suite is run
#   IMPL=hopper       hopper | bullmq
#   HOPPER_ROOT       the Hopper repository (default: this script's); run `npm run build` there first
#   WORK=/tmp/bullmq-extra-suite   scratch directory, one tree per IMPL (installs are reused)
#   REDIS_PORT=16393   a private redis-server is started there (never 6379) and stopped at the end
#   TEST_NAME=regex   only the tests whose full name matches (jest -t)
#
# Output: Jest's per-test lines, then "N passed, N failed"; $WORK/results/<impl>.json.
# Exit: 0 every test passed, 1 failures, 2 harness error.
set -uo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
HOPPER_ROOT="${HOPPER_ROOT:-$(cd "$HERE/../../.." && pwd)}"
BULLMQ_EXTRA_GIT="${BULLMQ_EXTRA_GIT:-}"
REF="${REF:-e0c5ff8}"
IMPL="${IMPL:-hopper}"
WORK="${WORK:-/tmp/bullmq-extra-suite}"
REDIS_PORT="${REDIS_PORT:-16393}"

die() { echo "[bullmq-extra] ERROR: $*" >&2; exit 2; }
. "$HERE/../lib.sh"
. "$HERE/../lib.sh"
log() { echo "[bullmq-extra] $*" >&2; }

[ -n "$BULLMQ_EXTRA_GIT" ] || die "set BULLMQ_EXTRA_GIT to the git directory of a copy of github.com/noamico/bullmq-extra"
[ "$REDIS_PORT" = "6379" ] && die "refusing REDIS_PORT=6379: use a private instance"
case "$IMPL" in hopper|bullmq) ;; *) die "IMPL must be hopper or bullmq" ;; esac
SHA="$(git --git-dir="$BULLMQ_EXTRA_GIT" rev-parse --verify -q "$REF^{commit}")" || die "no revision $REF in $BULLMQ_EXTRA_GIT"
command -v redis-server >/dev/null || die "redis-server not found"

# --- 1. the upstream tree, one per implementation (node_modules kept across runs) ---
TREE="$WORK/$IMPL"
mkdir -p "$WORK/results" "$TREE"
find "$TREE" -mindepth 1 -maxdepth 1 ! -name node_modules ! -name .install-stamp -exec rm -rf {} +
git --git-dir="$BULLMQ_EXTRA_GIT" archive "$SHA" | tar -x -C "$TREE" || die "git archive failed"
cp "$HERE/jest.config.harness.cjs" "$HERE/testcontainers-stub.cjs" "$TREE/"

# --- 2. its dependencies as its lock file pins them; for IMPL=hopper, hopper-queue as bullmq ---
TARBALL=""
if [ "$IMPL" = "hopper" ]; then
  rm -rf "$WORK/tarballs" && mkdir -p "$WORK/tarballs"
  pack_packages "$WORK/tarballs" hopper
  TARBALL="$(ls "$WORK"/tarballs/hopper-queue-*.tgz)"
fi
STAMP="$SHA $IMPL $( [ -n "$TARBALL" ] && sha1sum "$TARBALL" | cut -c1-12)"
cd "$TREE" || die "cannot enter $TREE"
if [ "$(cat .install-stamp 2>/dev/null)" != "$STAMP" ]; then
  log "npm ci (log: $WORK/results/npm-$IMPL.log)"
  npm ci --no-audit --no-fund --loglevel=error > "$WORK/results/npm-$IMPL.log" 2>&1 \
    || { tail -20 "$WORK/results/npm-$IMPL.log"; die "npm ci failed"; }
  if [ -n "$TARBALL" ]; then
    log "npm install bullmq@file:$TARBALL"
    npm install --no-audit --no-fund --loglevel=error --no-save "bullmq@file:$TARBALL" >> "$WORK/results/npm-$IMPL.log" 2>&1 \
      || { tail -20 "$WORK/results/npm-$IMPL.log"; die "npm install of the Hopper tarball failed"; }
  fi
  echo "$STAMP" > .install-stamp
fi
log "bullmq here is $(node -p "const p = require('./node_modules/bullmq/package.json'); p.name + ' ' + p.version")"

# --- 3. a private Redis ---
start_private_redis "$REDIS_PORT" "$WORK/results/redis.log"

# --- 4. run: upstream's Jest config plus the testcontainers stub ---
ARGS=(--config jest.config.harness.cjs --verbose --runInBand --json --outputFile "$WORK/results/$IMPL.json")
[ -n "${TEST_NAME:-}" ] && ARGS+=(-t "$TEST_NAME")
log "IMPL=$IMPL bullmq-extra $SHA, Redis on 127.0.0.1:$REDIS_PORT"
BULLMQ_EXTRA_REDIS_PORT="$REDIS_PORT" timeout --kill-after=30 1200 ./node_modules/.bin/jest "${ARGS[@]}" 2>&1 | tee "$WORK/results/$IMPL.log"
RC=${PIPESTATUS[0]}
[ -f "$WORK/results/$IMPL.json" ] || die "jest wrote no results (exit $RC)"
node -e "
const r = require('$WORK/results/$IMPL.json');
const failedSuites = r.testResults.filter((s) => s.status === 'failed' && s.assertionResults.length === 0).length;
console.log(r.numPassedTests + ' passed, ' + r.numFailedTests + ' failed' + (r.numPendingTests ? ', ' + r.numPendingTests + ' skipped' : '') +
  ' (of ' + r.numTotalTests + ' run' + (failedSuites ? '; ' + failedSuites + ' test files did not load' : '') + ')');"
[ "$RC" = "0" ] && exit 0 || exit 1
