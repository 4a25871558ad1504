// `npm test` after the build: runs every package's type check and tests in three lanes at once, so
// that the engine's suites (its Redis and SQLite tiers, CPU-bound) overlap the other packages' suites (mostly
// waiting: processes, HTTP servers, a browser). Each lane runs its steps in order and stops at its
// first failure; the output of each step is printed whole when it ends, under its name; the exit
// code is non-zero when any step failed.
//
// HOPPER_TEST_TIER=sqlite runs only the engine's SQLite tier (its type check, then the tests of the
// engine-sqlite project: no Redis needed), for the quick form of the fresh-clone check
// (scripts/fresh-clone-check.mjs --quick; docs/testing.md). Unset: everything.
import { spawn } from 'node:child_process';

const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const TIERS = {
  sqlite: [
    [
      ['typecheck', 'hopper-queue'],
      ['test:sqlite', 'hopper-queue'],
    ],
  ],
};
const tier = process.env.HOPPER_TEST_TIER;
if (tier !== undefined && tier !== '' && !(tier in TIERS)) {
  console.error(`HOPPER_TEST_TIER must be one of ${Object.keys(TIERS).join(', ')} (or unset: every test), got "${tier}".`);
  process.exit(2);
}
// Three lanes: the engine's Redis tier, its SQLite tier (both CPU-bound), and one type check of
// every package (tsconfig.typecheck.json: one tsc program, not one per package) followed by the
// other packages' tests (mostly waiting), so the waits of the third overlap the work of the first two.
// The engine's Redis tier is split: the files of ENGINE_SIDE_FILES (packages/hopper/vitest.config.ts:
// mostly waiting on child processes and the clock) run at the end of the third lane, which would
// otherwise end well before the first.
const lanes = TIERS[tier] ?? [
  [['test:engine', 'hopper-queue', { HOPPER_TEST_PART: 'main' }]],
  [['test:sqlite', 'hopper-queue']],
  [
    ['typecheck'],
    ['test', 'hopper-queue-metrics'],
    ['test', 'hopper-queue-cli'],
    ['test', 'hopper-queue-nestjs'],
    ['test', 'hopper-queue-bull-board'],
    ['test', 'hopper-queue-dashboard'],
    ['test:engine', 'hopper-queue', { HOPPER_TEST_PART: 'side' }],
  ],
];
if (TIERS[tier]) console.log(`== HOPPER_TEST_TIER=${tier}: ${TIERS[tier].flat().map(label).join(', ')}`);

/** A step's name in the output: `test:engine hopper (HOPPER_TEST_PART=side)`. */
function label([script, workspace, env]) {
  const vars = Object.entries(env ?? {}).map(([k, v]) => `${k}=${v}`);
  return [script, workspace, vars.length ? `(${vars.join(' ')})` : ''].filter(Boolean).join(' ');
}

/** Runs `npm run <script> [-w <workspace>]` (with `env` added), its output collected; resolves to its exit code. */
function step([script, workspace, env]) {
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn(npm, ['run', script, ...(workspace ? ['-w', workspace] : [])], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, ...env },
    });
    const out = [];
    child.stdout.on('data', (chunk) => out.push(chunk));
    child.stderr.on('data', (chunk) => out.push(chunk));
    child.on('close', (code) => {
      const seconds = ((Date.now() - started) / 1000).toFixed(1);
      process.stdout.write(`\n== ${label([script, workspace, env])}: ${code === 0 ? 'passed' : `FAILED (exit ${code})`} in ${seconds} s\n`);
      process.stdout.write(Buffer.concat(out));
      resolve(code ?? 1);
    });
  });
}

async function lane(steps) {
  for (const s of steps) {
    const code = await step(s);
    if (code !== 0) return label(s);
  }
  return undefined;
}

const t0 = Date.now();
const failed = (await Promise.all(lanes.map(lane))).filter(Boolean);
const seconds = Math.round((Date.now() - t0) / 1000);
if (failed.length > 0) {
  console.error(`\n== npm test FAILED: ${failed.join(', ')} (after ${seconds} s)`);
  process.exit(1);
}
console.log(
  TIERS[tier]
    ? `\n== npm test (HOPPER_TEST_TIER=${tier}): passed in ${seconds} s`
    : `\n== npm test: every package's type check and tests passed in ${seconds} s`,
);
