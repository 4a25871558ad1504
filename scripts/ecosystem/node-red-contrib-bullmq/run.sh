#!/usr/bin/env bash
# run.sh — run node-red-contrib-bullmq's own tests (github.com/pauldeng/node-red-contrib-bullmq at
# f7ddc21; node:test) against BullMQ (IMPL=bullmq, the baseline: the versions its lock file pins)
# or against Hopper (IMPL=hopper), swapped in the way a migrating user swaps it: the `npm pack`
# tarball of hopper-queue installed as `bullmq` (`npm install bullmq@file:<tarball>`). Nothing of
# the package or its tests is changed.
#
#   NODE_RED_BULLMQ_GIT=/work/.mirror/pauldeng+node-red-contrib-bullmq/repo IMPL=hopper \
#     scripts/ecosystem/node-red-contrib-bullmq/run.sh
#
# Two runs, as its package.json defines them:
#   unit         `node --test test/*.test.js` (its integration tests are skipped there);
#   integration  `BULLMQ_INTEGRATION=1 node --test test/integration-standalone.test.js` (a Node-RED
#                runtime with the nodes, on a redis-server the test file starts on a random port).
#
# Env:
#   NODE_RED_BULLMQ_GIT  git directory of a copy of the repository (required)
#   REF=f7ddc21          the revision whose tests are run
#   IMPL=hopper          hopper | bullmq
#   HOPPER_ROOT          the Hopper repository (default: this script's); run `npm run build` there first
#   WORK=/tmp/node-red-bullmq-suite   scratch directory, one tree per IMPL (installs are reused)
#   NODE_RED=5.0.7       the node-red dev dependency (the lock's 5.0.0 is no longer served)
#
# Output: node:test's TAP for each run, then "unit: ..." and "integration: ..." and the total
# "N passed, N failed, N skipped"; logs in $WORK/results/. Exit: 0 all passed, 1 failures, 2 harness error.
set -uo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
HOPPER_ROOT="${HOPPER_ROOT:-$(cd "$HERE/../../.." && pwd)}"
NODE_RED_BULLMQ_GIT="${NODE_RED_BULLMQ_GIT:-}"
REF="${REF:-f7ddc21}"
IMPL="${IMPL:-hopper}"
WORK="${WORK:-/tmp/node-red-bullmq-suite}"
NODE_RED="${NODE_RED:-5.0.7}"

die() { echo "[node-red-bullmq] ERROR: $*" >&2; exit 2; }
. "$HERE/../lib.sh"
log() { echo "[node-red-bullmq] $*" >&2; }

[ -n "$NODE_RED_BULLMQ_GIT" ] || die "set NODE_RED_BULLMQ_GIT to the git directory of a copy of github.com/pauldeng/node-red-contrib-bullmq"
case "$IMPL" in hopper|bullmq) ;; *) die "IMPL must be hopper or bullmq" ;; esac
SHA="$(git --git-dir="$NODE_RED_BULLMQ_GIT" rev-parse --verify -q "$REF^{commit}")" || die "no revision $REF in $NODE_RED_BULLMQ_GIT"
command -v redis-server >/dev/null || die "redis-server not found (the integration tests start their own)"

# --- 1. the upstream tree, one per implementation (node_modules kept across runs) ---
TREE="$WORK/$IMPL"
mkdir -p "$WORK/results" "$TREE"
find "$TREE" -mindepth 1 -maxdepth 1 ! -name node_modules ! -name .install-stamp -exec rm -rf {} +
git --git-dir="$NODE_RED_BULLMQ_GIT" archive "$SHA" | tar -x -C "$TREE" || die "git archive failed"

# --- 2. its dependencies as its lock file pins them; for IMPL=hopper, hopper-queue as bullmq ---
TARBALL=""
if [ "$IMPL" = "hopper" ]; then
  rm -rf "$WORK/tarballs" && mkdir -p "$WORK/tarballs"
  pack_packages "$WORK/tarballs" hopper
  TARBALL="$(ls "$WORK"/tarballs/hopper-queue-*.tgz)"
fi
STAMP="$SHA $IMPL $NODE_RED $( [ -n "$TARBALL" ] && sha1sum "$TARBALL" | cut -c1-12)"
cd "$TREE" || die "cannot enter $TREE"
if [ "$(cat .install-stamp 2>/dev/null)" != "$STAMP" ]; then
  # The one harness change: the lock pins node-red 5.0.0 (a dev dependency: the runtime its tests
  # load the nodes into), which the registry no longer serves; NODE_RED (default 5.0.7, the 5.0 line's
  # latest) replaces it. Everything else installs as the lock file pins it. package.json and the
  # lock are put back afterwards: the package's own tests read them.
  log "npm install, node-red@$NODE_RED (log: $WORK/results/npm-$IMPL.log)"
  cp package.json package.json.orig && cp package-lock.json package-lock.json.orig
  npm pkg set "devDependencies.node-red=$NODE_RED" || die "npm pkg set failed"
  npm install --no-audit --no-fund --loglevel=error > "$WORK/results/npm-$IMPL.log" 2>&1 \
    || { tail -20 "$WORK/results/npm-$IMPL.log"; die "npm install failed"; }
  if [ -n "$TARBALL" ]; then
    log "npm install bullmq@file:$TARBALL"
    npm install --no-audit --no-fund --loglevel=error --no-save "bullmq@file:$TARBALL" >> "$WORK/results/npm-$IMPL.log" 2>&1 \
      || { tail -20 "$WORK/results/npm-$IMPL.log"; die "npm install of the Hopper tarball failed"; }
  fi
  mv package.json.orig package.json && mv package-lock.json.orig package-lock.json
  echo "$STAMP" > .install-stamp
fi
# (git archive lays the tree anew on every run, so package.json and the lock are upstream's here.)
log "bullmq here is $(node -p "const p = require('./node_modules/bullmq/package.json'); p.name + ' ' + p.version")"

# --- 3. run both, as package.json's scripts do ---
summary() { # <name> <tap file>: "pass fail skipped" from node:test's closing lines
  local pass fail skip
  pass=$(grep -E '^# pass ' "$2" | tail -1 | awk '{print $3}')
  fail=$(grep -E '^# fail ' "$2" | tail -1 | awk '{print $3}')
  skip=$(grep -E '^# skipped ' "$2" | tail -1 | awk '{print $3}')
  echo "${pass:-0} ${fail:-0} ${skip:-0}"
}
log "IMPL=$IMPL node-red-contrib-bullmq $SHA: unit tests"
timeout --kill-after=30 900 node --test --test-reporter=tap test/*.test.js > "$WORK/results/$IMPL-unit.tap" 2>&1
RC_UNIT=$?
cat "$WORK/results/$IMPL-unit.tap"
log "IMPL=$IMPL node-red-contrib-bullmq $SHA: integration tests"
BULLMQ_INTEGRATION=1 timeout --kill-after=30 900 node --test --test-reporter=tap test/integration-standalone.test.js > "$WORK/results/$IMPL-integration.tap" 2>&1
RC_INT=$?
cat "$WORK/results/$IMPL-integration.tap"
read -r UP UF US <<< "$(summary unit "$WORK/results/$IMPL-unit.tap")"
read -r IP IF IS <<< "$(summary integration "$WORK/results/$IMPL-integration.tap")"
echo "unit: $UP passed, $UF failed, $US skipped"
echo "integration: $IP passed, $IF failed, $IS skipped"
echo "$((UP + IP)) passed, $((UF + IF)) failed, $((US + IS)) skipped"
[ "$RC_UNIT" = "0" ] && [ "$RC_INT" = "0" ] && exit 0 || exit 1
