// The cost probe: `npm run bench:cost [-- --check]`.
//
// Throughput on a shared machine swings by 30% from one minute to the next, so a small hot-path
// regression hides in the noise of `npm run bench`. This probe counts what does not swing: the
// Redis commands each library sends (scripts' inner calls included, from INFO commandstats) and
// the script calls (round trips that run Lua) per 1,000 jobs, for the hot-path scenarios, Hopper
// and BullMQ side by side. The microseconds Redis reports spending in scripts are printed too, as a
// rough figure (they move with the machine's load).
//
// `--check` compares Hopper's counts with the committed ones (bench/results/cost.json) and fails
// when a scenario sends more than 10% more commands or script calls per job than committed.
// Method and figures: docs/performance.md, "The cost probe".

import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { startRedis } from './redis/server.mjs';
import { parseInfo } from './redis/client.mjs';
import * as hopperLib from './libs/hopper.mjs';
import * as bullmqLib from './libs/bullmq.mjs';
import { hotPathScenarios } from './workloads.mjs';

const RESULTS = fileURLToPath(new URL('../results/', import.meta.url));
/** A scenario may send at most this much more per job than the committed figure. */
const TOLERANCE = 0.1;

const { values } = parseArgs({ options: { check: { type: 'boolean' }, jobs: { type: 'string' } } });
const JOBS = Number(values.jobs ?? 10_000);
if (!Number.isInteger(JOBS) || JOBS < 1_000) throw new Error(`--jobs must be an integer >= 1000, not "${values.jobs}"`);

/** Hot-path scenarios: single adds (50 in flight, as the bench), then draining at c=1, 10, 100. */
const SCENARIOS = hotPathScenarios(JOBS, 'cost');

/** Commands, script calls and Redis's reported microseconds since the last RESETSTAT. */
async function readCounts(control) {
  const stats = parseInfo(String(await control.command('INFO', 'commandstats')));
  let commands = 0;
  let scripts = 0;
  let usec = 0;
  for (const [name, value] of stats) {
    const calls = Number(/calls=(\d+)/.exec(value)?.[1] ?? 0);
    const spent = Number(/usec=(\d+)/.exec(value)?.[1] ?? 0);
    // The probe's own INFO and CONFIG calls are not the library's.
    if (name === 'cmdstat_info' || name === 'cmdstat_config') continue;
    commands += calls;
    if (/^cmdstat_(evalsha|eval|evalsha_ro|eval_ro|fcall|fcall_ro)$/.test(name)) {
      scripts += calls;
      usec += spent; // a script's time includes its inner commands
    }
  }
  return { commands, scripts, usec };
}

const redis = await startRedis();
const results = [];
try {
  for (const scenario of SCENARIOS) {
    // A check compares Hopper with its committed counts: BullMQ's are not needed.
    for (const lib of values.check ? [hopperLib] : [hopperLib, bullmqLib]) {
      await redis.control.command('FLUSHALL');
      const run = await scenario.run(lib, redis.connection);
      await redis.control.command('CONFIG', 'RESETSTAT');
      await run.measure();
      const counts = await readCounts(redis.control);
      await run.close();
      const per = (n) => Math.round((n * 1_000 * 10) / JOBS) / 10;
      const row = {
        scenario: scenario.id,
        lib: lib.name,
        commandsPer1000: per(counts.commands),
        scriptCallsPer1000: per(counts.scripts),
        scriptUsecPer1000: Math.round((counts.usec * 1_000) / JOBS),
      };
      results.push(row);
      console.log(
        `${row.scenario.padEnd(14)} ${row.lib.padEnd(7)} commands/1000 jobs ${String(row.commandsPer1000).padStart(8)}` +
          `  script calls/1000 ${String(row.scriptCallsPer1000).padStart(7)}  script µs/1000 (rough) ${row.scriptUsecPer1000}`,
      );
    }
  }
} finally {
  redis.killNow();
}

if (values.check) {
  const committed = JSON.parse(readFileSync(`${RESULTS}cost.json`, 'utf8')).results;
  const problems = [];
  for (const row of results.filter((r) => r.lib === 'hopper')) {
    const base = committed.find((c) => c.lib === 'hopper' && c.scenario === row.scenario);
    if (!base) continue;
    for (const field of ['commandsPer1000', 'scriptCallsPer1000']) {
      if (row[field] > base[field] * (1 + TOLERANCE)) {
        problems.push(`${row.scenario}: ${field} ${row[field]} > committed ${base[field]} + 10%`);
      }
    }
  }
  if (problems.length > 0) {
    console.error(`cost probe: Hopper sends more per job than committed:\n  ${problems.join('\n  ')}`);
    process.exit(1);
  }
  console.log('cost probe: Hopper sends no more per job than committed (within 10%)');
} else {
  const json = { date: new Date().toISOString(), jobs: JOBS, redis: redis.version, results };
  writeFileSync(`${RESULTS}cost.json`, `${JSON.stringify(json, null, 2)}\n`);
  const lines = [
    '# Cost probe',
    '',
    `Commands each library sends to Redis per 1,000 jobs (INFO commandstats, scripts' inner calls included), ${JOBS.toLocaleString('en-US')} jobs per row, Redis ${redis.version}, ${json.date}. Command: \`npm run bench:cost\`. Method: docs/performance.md.`,
    '',
    '| scenario | library | commands / 1,000 jobs | script calls / 1,000 jobs | script µs / 1,000 jobs (rough) |',
    '|---|---|---|---|---|',
    ...results.map((r) => `| ${r.scenario} | ${r.lib} | ${r.commandsPer1000} | ${r.scriptCallsPer1000} | ${r.scriptUsecPer1000} |`),
    '',
  ];
  writeFileSync(`${RESULTS}cost.md`, lines.join('\n'));
  console.log('wrote results/cost.md (and .json)');
}
