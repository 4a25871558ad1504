// Installs the workspace's dependencies when they are missing or older than package-lock.json,
// so that the README's two commands (`npm run demo`, `npm test`) work on a fresh clone with
// nothing but Node and npm. Does nothing when node_modules is up to date.
import { spawnSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const lock = path.join(root, 'package-lock.json');
const installed = path.join(root, 'node_modules', '.package-lock.json');

const stale = !existsSync(installed) || statSync(installed).mtimeMs < statSync(lock).mtimeMs;
if (stale) {
  console.log('== installing dependencies (npm ci): node_modules is missing or older than package-lock.json');
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const result = spawnSync(npm, ['ci', '--no-audit', '--no-fund'], { cwd: root, stdio: 'inherit' });
  if (result.status !== 0) {
    console.error('npm ci failed: check your network access to the npm registry, then run the command again.');
    process.exit(result.status ?? 1);
  }
}
