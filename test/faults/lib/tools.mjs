// The tools some rows need beyond redis-server: a row whose tool is missing is reported as
// skipped (loudly), never as passed.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

export function hasCommand(cmd) {
  return spawnSync('/bin/sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' }).status === 0;
}

/** libfaketime's preload library (Debian package `faketime`), or undefined. */
export function libfaketime() {
  return [
    process.env.LIBFAKETIME,
    '/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1',
    '/usr/lib/aarch64-linux-gnu/faketime/libfaketime.so.1',
    '/usr/lib/faketime/libfaketime.so.1',
    '/usr/local/lib/faketime/libfaketime.so.1',
  ].find((path) => path && existsSync(path));
}

/** The Sentinel command: `redis-sentinel`, or `redis-server --sentinel` (the same program). */
export function sentinelCommand() {
  if (hasCommand('redis-sentinel')) return ['redis-sentinel'];
  if (hasCommand('redis-server')) return ['redis-server', '--sentinel'];
  return undefined;
}

export const needs = {
  sentinel: () => (sentinelCommand() ? undefined : 'redis-sentinel'),
  cluster: () => (hasCommand('redis-cli') ? undefined : 'redis-cli (for redis-cli --cluster create)'),
  faketime: () => (libfaketime() ? undefined : 'faketime (libfaketime: apt-get install faketime)'),
};
