// `npm run build`: builds every package in dependency order, unless nothing a build reads has
// changed since the last successful one. The inputs (every file under each package's src/, ui/,
// scripts/ and bin/, its package.json, tsconfig*.json and vite.config.ts, the root tsconfig.base.json
// and package-lock.json) are hashed; the hash of the last successful build is kept in
// node_modules/.cache/hopper-build.json, and every package's dist/ must still exist. So `npm test`
// after `npm run demo` (CI runs both on a fresh clone) builds once, not twice.
//
// Usage: node scripts/build.mjs [--force]   (npm run build -- --force: build even when up to date)
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

/** Workspaces in build order (each after what it imports), with their package directories. */
const PACKAGES = [
  ['hopper-queue', 'packages/hopper'],
  ['hopper-queue-metrics', 'packages/metrics'],
  ['hopper-queue-dashboard', 'packages/dashboard'],
  ['hopper-queue-cli', 'packages/cli'],
  ['hopper-queue-bull-board', 'packages/bull-board'],
  ['hopper-queue-nestjs', 'packages/nestjs'],
];
const INPUT_DIRS = ['src', 'ui', 'scripts', 'bin'];
const INPUT_FILE = /^(package\.json|tsconfig.*\.json|vite\.config\.ts)$/;
const cacheFile = path.join(root, 'node_modules', '.cache', 'hopper-build.json');

function* walk(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules' || entry.name === 'dist') continue;
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) yield* walk(full);
    else if (entry.isFile()) yield full;
  }
}

/** The hash of every build input: paths and contents, in a stable order. */
function inputsHash() {
  const files = [path.join(root, 'tsconfig.base.json'), path.join(root, 'package-lock.json')];
  for (const [, dir] of PACKAGES) {
    const pkg = path.join(root, dir);
    for (const name of readdirSync(pkg)) if (INPUT_FILE.test(name)) files.push(path.join(pkg, name));
    for (const sub of INPUT_DIRS) if (existsSync(path.join(pkg, sub))) files.push(...walk(path.join(pkg, sub)));
  }
  const hash = createHash('sha256');
  for (const file of files.sort()) {
    hash.update(path.relative(root, file));
    hash.update('\0');
    hash.update(readFileSync(file));
    hash.update('\0');
  }
  return hash.digest('hex');
}

function lastBuild() {
  try {
    return JSON.parse(readFileSync(cacheFile, 'utf8')).hash;
  } catch {
    return undefined;
  }
}

const force = process.argv.includes('--force');
const outputsThere = PACKAGES.every(([, dir]) => existsSync(path.join(root, dir, 'dist')));
if (!force && outputsThere && lastBuild() === inputsHash()) {
  console.log('== build: every package is up to date (no input changed since the last build; --force builds anyway)');
  process.exit(0);
}
for (const [workspace] of PACKAGES) {
  const result = spawnSync(npm, ['run', 'build', '-w', workspace], { cwd: root, stdio: 'inherit' });
  if (result.status !== 0) {
    console.error(`== build of ${workspace} failed (exit ${result.status}): fix the error above and run the command again.`);
    process.exit(result.status ?? 1);
  }
}
// Hashed after the build: the build regenerates some inputs (the Lua scripts' generated module).
mkdirSync(path.dirname(cacheFile), { recursive: true });
writeFileSync(cacheFile, JSON.stringify({ hash: inputsHash(), at: new Date().toISOString() }) + '\n');
