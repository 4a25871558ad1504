// The README's two commands on a fresh clone (issue 15): clones this checkout (its committed
// HEAD) into a temporary directory and runs exactly `npm run demo`, then `npm test`, as the README
// writes them, with no REDIS_URL.
//
// The demo runs where no Redis can be found, so it must choose the embedded SQLite backend: in a
// network namespace of its own (`unshare -n`, loopback up: nothing listens on 127.0.0.1:6379
// there) and with a PATH where no `redis-server` is found. The namespace has no network either,
// so the demo's own install (`npm ci`, run by `npm run demo` on a clone without node_modules)
// takes the packages from npm's cache (npm_config_offline=true): the packages a fresh machine
// downloads. It asserts the demo says it uses SQLite and that no job was lost.
//
// Then `npm test`, outside the namespace (still no REDIS_URL): in full by default (about 7
// minutes; it needs a Redis as the README says: this machine's, or its redis-server); with
// `--quick`, with HOPPER_TEST_TIER=sqlite, which scripts/test-all.mjs honours by running only the
// SQLite tier. (That tier needs no Redis since its dataset-reset check moved to the Redis tier,
// test/queue/dataset-reset.test.ts; it still runs outside the namespace here.)
//
// With `--here` (CI: .ci/run's checkout is itself a fresh clone, where `npm run demo` already ran
// as the README's first command and installed and built everything): no clone, no install, no
// `npm test`; only the built demo (`node examples/demo.mjs`) in the namespace, which must choose
// SQLite and lose no job.
//
// Usage: node scripts/fresh-clone-check.mjs [--quick] [--keep] [--here]   (npm run test:fresh-clone -- --quick)
// Needs Linux, `unshare` and `ip` (util-linux, iproute2) and the right to create a network
// namespace (root, or CAP_SYS_ADMIN). --keep leaves the clone in place for a look.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const quick = process.argv.includes('--quick');
const keep = process.argv.includes('--keep');
const here = process.argv.includes('--here');
const started = Date.now();
const elapsed = () => `${((Date.now() - started) / 1000).toFixed(0)} s`;

class CheckFailed extends Error {}

function fail(message) {
  throw new CheckFailed(message);
}

function namespaceUnsupported() {
  if (process.platform !== 'linux') return `network namespaces are Linux only (this is ${process.platform})`;
  const probe = spawnSync('unshare', ['-n', '--', 'ip', 'link', 'set', 'lo', 'up'], { encoding: 'utf8' });
  if (probe.error) return `cannot run unshare (${probe.error.message}): install util-linux and iproute2`;
  if (probe.status !== 0) return `unshare -n failed (${(probe.stderr || '').trim()}): it needs root or CAP_SYS_ADMIN`;
  return undefined;
}

/**
 * A PATH where `redis-server` is not found: each directory holding one is replaced by a directory
 * of links to everything else it holds.
 */
function pathWithoutRedis(work) {
  const dirs = (process.env.PATH ?? '').split(path.delimiter).filter(Boolean);
  return dirs
    .map((dir, i) => {
      if (!existsSync(path.join(dir, 'redis-server'))) return dir;
      const shadow = path.join(work, `path-${i}`);
      mkdirSync(shadow);
      for (const name of readdirSync(dir)) if (!name.startsWith('redis-')) symlinkSync(path.join(dir, name), path.join(shadow, name));
      return shadow;
    })
    .join(path.delimiter);
}

/** Runs `npm run <script>` in the clone (in the namespace when `isolated`); resolves to its output. */
function npmRun(clone, script, env, isolated) {
  return run(clone, ['npm', 'run', script], env, isolated);
}

/** Runs `argv` in `cwd` (in the namespace when `isolated`), its output shown; resolves to its exit code and output. */
function run(cwd, argv, env, isolated) {
  const command = isolated
    ? ['unshare', ['-n', '--', 'sh', '-c', 'ip link set lo up && exec "$@"', 'sh', ...argv]]
    : [argv[0], argv.slice(1)];
  console.log(`\n== ${argv.join(' ')}${isolated ? ' (in a network namespace: no Redis, no network)' : ''}`);
  return new Promise((resolve) => {
    const child = spawn(command[0], command[1], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    const tee = (chunk) => {
      out += chunk;
      process.stdout.write(chunk);
    };
    child.stdout.on('data', tee);
    child.stderr.on('data', tee);
    child.on('close', (code) => resolve({ code: code ?? 1, out }));
  });
}

const why = namespaceUnsupported();
if (why) {
  console.error(`== fresh-clone check FAILED: the demo must run where no Redis is reachable, and ${why}.`);
  process.exit(1);
}

/** Asserts the demo's output says it ran on SQLite and lost no job. */
function checkDemo(demo, what) {
  if (demo.code !== 0) fail(`${what} exited with ${demo.code}`);
  if (!/SQLite/.test(demo.out)) fail(`${what} did not say it uses the SQLite backend`);
  if (!/no job lost/.test(demo.out)) fail(`${what} did not report "no job lost"`);
  console.log(`\n== demo: on SQLite, no job lost (${elapsed()} so far)`);
}

const work = mkdtempSync(path.join(tmpdir(), 'hopper-fresh-clone-'));
const clone = here ? root : path.join(work, 'hopper');
try {
  const base = { ...process.env };
  delete base.REDIS_URL;
  delete base.HOPPER_TEST_TIER;
  // No terminal (output piped): the demo stops by itself after 15 s.
  const isolated = { ...base, PATH: pathWithoutRedis(work), npm_config_offline: 'true' };

  if (here) {
    if (!existsSync(path.join(root, 'packages', 'hopper', 'dist')))
      fail('--here needs a built checkout: run `npm run demo` (or `npm run build`) first');
    checkDemo(await run(root, ['node', 'examples/demo.mjs'], isolated, true), 'the demo');
    console.log(`\n== fresh-clone check (--here) passed in ${elapsed()}: the demo chose SQLite where no Redis answers, no job lost`);
  } else {
    console.log(`== cloning ${root} (HEAD) into ${clone}`);
    const cloned = spawnSync('git', ['clone', '--quiet', root, clone], { stdio: 'inherit' });
    if (cloned.status !== 0) fail('git clone failed');

    checkDemo(await npmRun(clone, 'demo', isolated, true), 'npm run demo');

    const test = await npmRun(clone, 'test', quick ? { ...base, HOPPER_TEST_TIER: 'sqlite' } : base, false);
    if (test.code !== 0) fail(`npm test${quick ? ' (HOPPER_TEST_TIER=sqlite)' : ''} exited with ${test.code}`);
    console.log(
      `\n== fresh-clone check passed in ${elapsed()}: npm run demo (SQLite, no job lost), npm test${quick ? ' (SQLite tier)' : ''}`,
    );
  }
} catch (err) {
  if (!(err instanceof CheckFailed)) throw err;
  console.error(`\n== fresh-clone check FAILED after ${elapsed()}: ${err.message}`);
  process.exitCode = 1;
} finally {
  if (keep && !here) console.log(`== the clone is kept in ${clone}`);
  else rmSync(work, { recursive: true, force: true });
}
