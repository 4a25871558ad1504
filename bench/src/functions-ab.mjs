// Redis CPU of the Functions library against the EVALSHA scripts: `npm run bench:functions`.
//
// One build, one throwaway Redis, the same workloads run both ways: as the default user (Hopper
// calls its library with FCALL) and as an ACL user without FUNCTION and FCALL (Hopper falls back
// to the standalone scripts with EVALSHA, the path where FUNCTION is denied). The only difference
// is how the Lua runs. Rounds alternate the two modes; the figures are medians of Redis's own
// accounting (INFO commandstats: the µs a script call spent, its inner commands included, and
// usec_per_call). Method and figures: docs/performance.md, "Redis Functions".

import { parseArgs } from 'node:util';
import { startRedis } from './redis/server.mjs';
import { parseInfo } from './redis/client.mjs';
import * as hopperLib from './libs/hopper.mjs';
import { hotPathScenarios } from './workloads.mjs';

const { values } = parseArgs({ options: { jobs: { type: 'string' }, rounds: { type: 'string' } } });
const JOBS = Number(values.jobs ?? 20_000);
const ROUNDS = Number(values.rounds ?? 3);
if (!Number.isInteger(JOBS) || JOBS < 1_000) throw new Error(`--jobs must be an integer >= 1000, not "${values.jobs}"`);
if (!Number.isInteger(ROUNDS) || ROUNDS < 1) throw new Error(`--rounds must be a positive integer, not "${values.rounds}"`);

// A warm add first: the library's load on the first call is not counted.
const SCENARIOS = hotPathScenarios(JOBS, 'ab', { warm: true, addOpts: { removeOnComplete: true } });

/** Script calls and the µs Redis spent in them (inner commands included), since the last RESETSTAT. */
async function scriptCounts(control) {
  const stats = parseInfo(String(await control.command('INFO', 'commandstats')));
  let calls = 0;
  let usec = 0;
  for (const [name, value] of stats) {
    if (!/^cmdstat_(evalsha|eval|fcall)$/.test(name)) continue;
    calls += Number(/calls=(\d+)/.exec(value)?.[1] ?? 0);
    usec += Number(/usec=(\d+)/.exec(value)?.[1] ?? 0);
  }
  return { calls, usec };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const redis = await startRedis();
const MODES = {
  fcall: redis.connection,
  evalsha: { ...redis.connection, username: 'noscriptfn', password: 'bench' },
};
await redis.control.command('ACL', 'SETUSER', 'noscriptfn', 'on', '>bench', '~*', '&*', '+@all', '-function', '-fcall', '-fcall_ro');
const rows = [];
try {
  for (const scenario of SCENARIOS) {
    const samples = { fcall: [], evalsha: [] };
    for (let round = 0; round < ROUNDS; round++) {
      for (const mode of round % 2 === 0 ? ['fcall', 'evalsha'] : ['evalsha', 'fcall']) {
        await redis.control.command('FLUSHALL');
        const run = await scenario.run(hopperLib, MODES[mode]);
        await redis.control.command('CONFIG', 'RESETSTAT');
        await run.measure();
        const counts = await scriptCounts(redis.control);
        await run.close();
        samples[mode].push({ per1000: (counts.usec * 1_000) / JOBS, perCall: counts.usec / counts.calls, calls: counts.calls });
      }
    }
    const row = { scenario: scenario.id };
    for (const mode of ['evalsha', 'fcall']) {
      row[mode] = {
        usecPer1000Jobs: Math.round(median(samples[mode].map((s) => s.per1000))),
        usecPerCall: Math.round(median(samples[mode].map((s) => s.perCall)) * 100) / 100,
        callsPer1000Jobs: Math.round((median(samples[mode].map((s) => s.calls)) * 1_000) / JOBS),
      };
    }
    rows.push(row);
    console.log(
      `${row.scenario.padEnd(14)} script µs/1000 jobs: evalsha ${row.evalsha.usecPer1000Jobs}, fcall ${row.fcall.usecPer1000Jobs}` +
        ` (${((row.fcall.usecPer1000Jobs / row.evalsha.usecPer1000Jobs - 1) * 100).toFixed(0)}%);` +
        ` µs/call: evalsha ${row.evalsha.usecPerCall}, fcall ${row.fcall.usecPerCall}; calls/1000 jobs ${row.fcall.callsPer1000Jobs}`,
    );
  }
} finally {
  redis.killNow();
}
console.log(`Redis ${redis.version}, ${JOBS} jobs per run, medians of ${ROUNDS} rounds per mode.`);
