// `npm test` after the build: runs every package's type check and tests in three lanes at once, so
// that the engine's suites (its Redis and SQLite tiers, CPU-bound) overlap the other packages' suites (mostly
// waiting: processes, HTTP servers, a browser). Each lane runs its steps in order, all of them even
// after one fails (the steps do not depend on each other); the output of each step is printed whole
// when it ends, under its name; the run ends with one line per step (passed, FAILED or not run, with
// its time) and the exit code is non-zero when any step failed or did not run.
//
// HOPPER_TEST_TIER=sqlite runs only the engine's SQLite tier (its type check, then the tests of the
// engine-sqlite project: no Redis needed), for the quick form of the fresh-clone check
// (scripts/fresh-clone-check.mjs --quick; docs/development.md). Unset: everything.
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

/** Each step's outcome, in lane order: `{ name, status: 'passed' | 'FAILED' | 'not run', seconds }`. */
const results = lanes.map((steps) => steps.map((s) => ({ name: label(s), status: 'not run', seconds: 0 })));
let interrupted = false;
const children = new Set();

/** Runs `npm run <script> [-w <workspace>]` (with `env` added), its output collected; resolves to its exit code. */
function step([script, workspace, env]) {
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn(npm, ['run', script, ...(workspace ? ['-w', workspace] : [])], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, ...env },
    });
    children.add(child);
    const out = [];
    child.stdout.on('data', (chunk) => out.push(chunk));
    child.stderr.on('data', (chunk) => out.push(chunk));
    child.on('close', (code) => {
      children.delete(child);
      const seconds = ((Date.now() - started) / 1000).toFixed(1);
      process.stdout.write(`\n== ${label([script, workspace, env])}: ${code === 0 ? 'passed' : `FAILED (exit ${code})`} in ${seconds} s\n`);
      process.stdout.write(Buffer.concat(out));
      resolve({ code: code ?? 1, seconds });
    });
  });
}

async function lane(steps, i) {
  for (const [j, s] of steps.entries()) {
    if (interrupted) return;
    const { code, seconds } = await step(s);
    results[i][j] = { name: label(s), status: code === 0 ? 'passed' : 'FAILED', seconds };
  }
}

// Ctrl-C: stop the running steps, then report what ran and what did not.
process.once('SIGINT', () => {
  interrupted = true;
  for (const child of children) child.kill('SIGINT');
});

const t0 = Date.now();
await Promise.all(lanes.map(lane));
const seconds = Math.round((Date.now() - t0) / 1000);
const all = results.flat();
console.log(`\n== every step of npm test${TIERS[tier] ? ` (HOPPER_TEST_TIER=${tier})` : ''}:`);
for (const r of all) console.log(`   ${r.status.padEnd(8)} ${r.name}${r.status === 'not run' ? '' : ` (${r.seconds} s)`}`);
const bad = all.filter((r) => r.status !== 'passed');
if (bad.length > 0) {
  const failedSteps = bad.filter((r) => r.status === 'FAILED').map((r) => r.name);
  const notRun = bad.filter((r) => r.status === 'not run').map((r) => r.name);
  console.error(
    `\n== npm test FAILED after ${seconds} s: ${failedSteps.length} failed${failedSteps.length ? ` (${failedSteps.join(', ')})` : ''}` +
      `${notRun.length ? `, ${notRun.length} not run (${notRun.join(', ')})` : ''}`,
  );
  process.exit(1);
}
console.log(
  TIERS[tier]
    ? `\n== npm test (HOPPER_TEST_TIER=${tier}): all ${all.length} steps passed in ${seconds} s`
    : `\n== npm test: all ${all.length} steps (every package's type check and tests) passed in ${seconds} s`,
);
