// The benchmark orchestrator: `npm run bench -- [--quick] [--only=...] [--lib=...] [--runs=N]`.
//
// Starts a throwaway redis-server, then for every scenario case runs each library `runs`
// times, each run in fresh child processes on a flushed Redis, and writes the medians to
// bench/results/. The method is described in docs/performance.md.

import { performance } from 'node:perf_hooks';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { killAllChildren, probeLibrary, runStep } from './children.mjs';
import { LIBRARIES, SQLITE_LIBRARIES, parseCli } from './cli.mjs';
import { clockTicksPerSecond } from './redis/proc-cpu.mjs';
import { startRedis } from './redis/server.mjs';
import { describeMachine, summarizeResults, writeReport } from './report.mjs';
import { scenarios } from './scenarios/index.mjs';

const BENCH_DIR = fileURLToPath(new URL('..', import.meta.url));
/** The queue every run uses: Redis is flushed between runs, so one name is enough. */
const QUEUE_NAME = 'bench';
/** A 1-minute load average above this before the first run means other work competes for the CPU. */
const BUSY_LOAD = 0.5;
/** A run that takes longer than this is a hang, and is killed and reported as an error. */
const RUN_TIMEOUT_MS = { full: 10 * 60_000, quick: 2 * 60_000 };

/** @type {Awaited<ReturnType<typeof startRedis>> | undefined} */
let redis;
/** Where the SQLite libraries' file databases live (one per run), removed at exit. */
let sqliteDir;

// Whatever way the harness ends, no child process and no redis-server may survive it.
process.on('exit', () => {
  killAllChildren();
  redis?.killNow();
  if (sqliteDir) rmSync(sqliteDir, { recursive: true, force: true });
});
for (const signal of /** @type {const} */ (['SIGINT', 'SIGTERM', 'SIGHUP'])) {
  process.on(signal, () => {
    console.error(`\n${signal} received: stopping child processes and redis-server`);
    process.exit(128 + os.constants.signals[signal]); // the 'exit' handler above does the killing
  });
}

const slug = (text) => text.replace(/[^a-z0-9]+/gi, '-').replace(/^-|-$/g, '');

const formatMs = (ms) => (ms < 1_000 ? `${Math.round(ms)} ms` : `${(ms / 1_000).toFixed(1)} s`);

/**
 * Runs every step of one case for one library; returns the merged metrics and notes (with those
 * the scenario's `combine` derives from its roles' data), and the longest setup (fork to ready)
 * of its processes.
 */
async function runCase({ scenario, label, params }, lib, { timeoutMs, clockTicks, profileDir, run }) {
  const sqlite = SQLITE_LIBRARIES.has(lib);
  // A library on SQLite gets a fresh file database per run (the Redis libraries get a flushed
  // Redis); the figures of the Redis server do not apply to it.
  const connection = sqlite ? `sqlite:${path.join(sqliteDir, `${slug(label)}-${run}.db`)}` : redis.connection;
  const metrics = {};
  const notes = [];
  /** Each role's `data`, for `combine`. */
  const data = {};
  let setupMs = 0;
  for (const roles of scenario.steps) {
    const specs = roles.map((role) => ({
      mode: 'role',
      lib,
      scenario: scenario.id,
      role,
      params,
      queueName: QUEUE_NAME,
      connection,
      redisPid: sqlite ? null : redis.pid,
      clockTicks,
    }));
    const execArgvFor = (role) =>
      profileDir
        ? ['--cpu-prof', `--cpu-prof-dir=${path.join(profileDir, slug(label))}`, `--cpu-prof-name=${lib}-run${run}-${role}.cpuprofile`]
        : [];
    for (const result of await runStep(specs, { timeoutMs, execArgvFor })) {
      Object.assign(metrics, result.metrics);
      data[result.role] = result.data;
      setupMs = Math.max(setupMs, result.setupMs);
      notes.push(...result.notes.map((note) => `${result.role}: ${note}`));
    }
  }
  if (scenario.combine) {
    const combined = scenario.combine(data, params) ?? {};
    Object.assign(metrics, combined.metrics);
    notes.push(...(combined.notes ?? []).filter((note) => typeof note === 'string'));
  }
  const expected = scenario.metrics.filter((m) => !(sqlite && m.redis));
  const missing = expected.filter((m) => !Number.isFinite(metrics[m.key])).map((m) => m.key);
  if (missing.length > 0) {
    throw new Error(`no valid figure for ${missing.join(', ')} (got ${JSON.stringify(metrics)})`);
  }
  return { metrics, notes, setupMs };
}

async function main() {
  const options = parseCli(
    process.argv.slice(2),
    scenarios.map((s) => s.id),
  );
  if (options.help) {
    console.log(options.help);
    return 0;
  }
  const selected = scenarios.filter((s) => !options.only || options.only.includes(s.id));
  // A misspelt library name would silently run the scenario for a library it does not apply to.
  for (const scenario of scenarios) {
    const unknown = Object.keys(scenario.notApplicable ?? {}).filter((lib) => !LIBRARIES.includes(lib));
    if (unknown.length > 0) throw new Error(`scenario ${scenario.id}: unknown library in notApplicable: ${unknown.join(', ')}`);
  }
  /** The selected libraries a scenario applies to (the others are reported as n/a). */
  const libsFor = (scenario) => options.libs.filter((lib) => !Object.hasOwn(scenario.notApplicable ?? {}, lib));
  const timeoutMs = options.quick ? RUN_TIMEOUT_MS.quick : RUN_TIMEOUT_MS.full;
  const clockTicks = clockTicksPerSecond();
  const date = new Date().toISOString();
  const profileDir = options.cpuProf ? path.join(BENCH_DIR, 'profiles', date.replace(/[:.]/g, '-')) : undefined;
  if (profileDir) mkdirSync(profileDir, { recursive: true });

  // Load each library once before starting anything long, so a missing build fails at once.
  /** @type {Record<string, string>} */
  const versions = {};
  for (const lib of options.libs) versions[lib] = (await probeLibrary(lib)).version;

  const notes = [];
  const loadAtStart = os.loadavg()[0];
  if (loadAtStart > BUSY_LOAD) {
    const warning = `the machine was busy when the benchmark started (1-minute load average ${loadAtStart.toFixed(2)}): other work competes for the CPU, so the figures are noisier than usual`;
    console.warn(`warning: ${warning}`);
    notes.push(warning);
  }

  redis = await startRedis();
  if (options.libs.some((lib) => SQLITE_LIBRARIES.has(lib))) sqliteDir = mkdtempSync(path.join(os.tmpdir(), 'hopper-bench-'));
  console.log(`redis-server ${redis.version} on port ${redis.connection.port} (pid ${redis.pid})`);
  console.log(
    `libraries: ${Object.entries(versions)
      .map(([lib, v]) => `${lib} ${v}`)
      .join(', ')}; runs per figure: ${options.runs}${options.quick ? '; quick mode' : ''}`,
  );

  const cases = [];
  const skipped = [];
  for (const scenario of selected) {
    if (scenario.skip) {
      console.log(scenario.skip);
      skipped.push(scenario.skip);
    } else {
      for (const c of scenario.cases(options.quick)) cases.push({ scenario, ...c });
    }
  }

  /** Metrics of each successful run, by `${label}\0${lib}`. */
  const runs = new Map();
  const errors = [];
  const failed = new Set();
  const totalRuns = cases.reduce((sum, c) => sum + options.runs * libsFor(c.scenario).length, 0);
  let done = 0;
  for (const [index, c] of cases.entries()) {
    if (c.scenario !== cases[index - 1]?.scenario) {
      console.log(`\n${c.scenario.title}`);
      for (const [lib, reason] of Object.entries(c.scenario.notApplicable ?? {})) {
        if (options.libs.includes(lib)) console.log(`${lib}: n/a (${reason}), not run`);
      }
    }
    const libs = libsFor(c.scenario);
    for (let run = 1; run <= options.runs; run++) {
      // Alternate which library goes first, so slow drift (thermal, neighbours) and any
      // after-effect of the previous run weigh on both equally.
      const order = run % 2 === 1 ? libs : [...libs].reverse();
      for (const lib of order) {
        done++;
        const key = `${c.label}\0${lib}`;
        const title = `[${done}/${totalRuns}] ${c.label} · ${lib} · run ${run}/${options.runs}`;
        // After a failure, the library's remaining runs of this case would fail the same way.
        if (failed.has(key)) {
          console.log(`${title}: skipped after an earlier failure`);
          continue;
        }
        await redis.control.command('FLUSHALL');
        const started = performance.now();
        try {
          const result = await runCase(c, lib, { timeoutMs, clockTicks, profileDir, run });
          if (!runs.has(key)) runs.set(key, []);
          runs.get(key).push(result.metrics);
          for (const note of result.notes) notes.push(`${c.label}, ${lib}, run ${run}: ${note}`);
          const headline = c.scenario.metrics[0];
          const value = result.metrics[headline.key].toLocaleString('en-US', {
            maximumFractionDigits: headline.digits,
          });
          const took = `${formatMs(performance.now() - started)}, slowest setup ${formatMs(result.setupMs)}`;
          console.log(`${title}: ${headline.label} ${value} ${headline.unit} (${took})`);
          for (const note of result.notes) console.log(`  note: ${note}`);
        } catch (error) {
          failed.add(key);
          errors.push({ case: c.label, lib, run, message: error.message });
          console.error(`${title}: FAILED\n  ${error.message.split('\n').join('\n  ')}`);
        }
        redis.assertAlive();
      }
    }
  }

  const report = {
    date,
    command: `npm run bench -- ${process.argv.slice(2).join(' ')}`.trim().replace(/ --$/, ''),
    machine: describeMachine({ redisVersion: redis.version, libraries: versions, loadAtStart }),
    settings: {
      quick: options.quick,
      runs: options.runs,
      libs: options.libs,
      only: options.only ?? null,
    },
    results: summarizeResults(cases, options.libs, (label, lib) => runs.get(`${label}\0${lib}`) ?? []),
    notes,
    skipped,
    errors,
  };
  await redis.stop();
  if (sqliteDir) rmSync(sqliteDir, { recursive: true, force: true });

  // Only a full-size run of every scenario and library replaces the committed baseline
  // (latest.*); a quick run is a smoke test (quick.*) and a partial one goes to partial.*.
  const partial = Boolean(options.only) || options.libs.length < LIBRARIES.length;
  const reportName = options.quick ? 'quick' : partial ? 'partial' : 'latest';
  const { markdownPath } = writeReport(path.join(BENCH_DIR, 'results'), reportName, report);
  console.log(`\nwrote ${path.relative(process.cwd(), markdownPath)} (and .json)`);
  if (errors.length > 0) {
    console.error(`${errors.length} case(s) failed; see the Errors section of the report`);
    return 1;
  }
  return 0;
}

try {
  process.exitCode = await main();
} catch (error) {
  console.error(`bench: ${error.message}`);
  process.exitCode = 1;
} finally {
  killAllChildren();
  await redis?.stop();
}
