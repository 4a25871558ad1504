#!/usr/bin/env bash
# run.sh — hopper-queue-nestjs in a Nest 10 or 11 application tested with Jest's defaults
# (ts-jest, CommonJS, type checking on, no transformIgnorePatterns): what most Nest projects run.
# The `npm pack` tarballs of hopper-queue and hopper-queue-nestjs are installed into a fresh
# project with Nest and Jest from the registry; app.test.ts (here) adds a job through an injected
# Queue and checks that a @Processor class processed it. Nest 12 ships ES modules only: its
# applications test with vitest (packages/nestjs/test) or Jest's ESM mode.
#
#   NEST_VERSION=11 scripts/ecosystem/nestjs-jest/run.sh
#
# Env:
#   NEST_VERSION=11   the major version of @nestjs/common, core and testing (10 or 11)
#   HOPPER_ROOT       the Hopper repository (default: this script's); run `npm run build` there first
#   WORK=/tmp/nestjs-jest-<version>   scratch directory (rebuilt each run)
#   REDIS_URL=redis://127.0.0.1:6379  the Redis the test uses (its keys under a prefix of its own)
# Exit: jest's (0 when the test passed); 2 harness error.
set -uo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
HOPPER_ROOT="${HOPPER_ROOT:-$(cd "$HERE/../../.." && pwd)}"
NEST_VERSION="${NEST_VERSION:-11}"
WORK="${WORK:-/tmp/nestjs-jest-$NEST_VERSION}"
export REDIS_URL="${REDIS_URL:-redis://127.0.0.1:6379}"

die() { echo "[nestjs-jest] ERROR: $*" >&2; exit 2; }
. "$HERE/../lib.sh"
case "$NEST_VERSION" in 10|11) ;; *) die "NEST_VERSION must be 10 or 11 (Nest 12 ships ES modules only)" ;; esac
[ -f "$HOPPER_ROOT/packages/nestjs/dist/cjs/index.js" ] || die "no build in $HOPPER_ROOT: run npm run build there first"

rm -rf "$WORK" && mkdir -p "$WORK" || die "cannot create $WORK"
pack_packages "$WORK" hopper nestjs
cp "$HERE/app.test.ts" "$HERE/tsconfig.json" "$WORK/"
cat > "$WORK/package.json" <<JSON
{ "name": "nestjs-jest-check", "private": true, "jest": { "preset": "ts-jest", "testEnvironment": "node" } }
JSON
cd "$WORK" || die "cannot enter $WORK"
npm install --silent --no-audit --no-fund ./hopper-queue-*.tgz ./hopper-queue-nestjs-*.tgz \
  "@nestjs/common@$NEST_VERSION" "@nestjs/core@$NEST_VERSION" "@nestjs/testing@$NEST_VERSION" \
  reflect-metadata rxjs jest@29 ts-jest@29 typescript@5 @types/jest@29 @types/node@20 >install.log 2>&1 ||
  { tail -20 install.log >&2; die "npm install failed (install.log)"; }
echo "[nestjs-jest] Nest $(node -p "require('@nestjs/common/package.json').version"), jest $(node -p "require('jest/package.json').version")" >&2
npx jest
