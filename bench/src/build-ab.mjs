// Redis time of two Hopper builds on one throwaway Redis: `node bench/src/build-ab.mjs --base <dir>`.
//
// A hot-path change to the Lua is judged by what Redis spends, not by throughput (which moves by
// a third with the shared machine's load). This runs the hot-path workloads (workloads.mjs) with
// this checkout's build ("branch") and with another checkout's build ("base", `--base` = its
// packages/hopper directory, built), alternating the order every round, on one Redis: the two
// builds' libraries have different names (the name carries the source's hash), so they coexist.
// Per scenario it prints medians over the rounds of Redis's own accounting (INFO commandstats):
// µs in script calls (their inner commands included) per 1,000 jobs and per call, commands per
// 1,000 jobs, and the redis-server process's CPU (user + system, networking included, 10 ms
// resolution) per 1,000 jobs; with --detail, the inner commands' µs per 1,000 jobs, by command.
// Method and figures: docs/performance.md, "CPU per job (issue 21)".

import { parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';
import { join, resolve } from 'node:path';
import { startRedis } from './redis/server.mjs';
import { parseInfo } from './redis/client.mjs';
import { clockTicksPerSecond, processCpuMs } from './redis/proc-cpu.mjs';
import * as branchLib from './libs/hopper.mjs';
import { hotPathScenarios } from './workloads.mjs';

const { values } = parseArgs({
  options: {
    base: { type: 'string' },
    jobs: { type: 'string' },
    rounds: { type: 'string' },
    only: { type: 'string' },
    detail: { type: 'boolean' },
  },
});
if (!values.base) throw new Error('--base <checkout>/packages/hopper (built) is required');
const JOBS = Number(values.jobs ?? 20_000);
const ROUNDS = Number(values.rounds ?? 5);
if (!Number.isInteger(JOBS) || JOBS < 1_000) throw new Error(`--jobs must be an integer >= 1000, not "${values.jobs}"`);
if (!Number.isInteger(ROUNDS) || ROUNDS < 1) throw new Error(`--rounds must be a positive integer, not "${values.rounds}"`);

const baseLib = await import(pathToFileURL(join(resolve(values.base), 'dist/esm/index.js')).href);
const LIBS = { base: baseLib, branch: branchLib };
const only = values.only?.split(',');
const SCENARIOS = hotPathScenarios(JOBS, 'ab', { warm: true, addOpts: { removeOnComplete: true }, groups: true }).filter(
  (s) => !only || only.some((o) => s.id.includes(o)),
);

/** Script calls, their µs, all commands, and each command's µs, since the last RESETSTAT. */
async function counts(control) {
  const stats = parseInfo(String(await control.command('INFO', 'commandstats')));
  const out = { calls: 0, usec: 0, commands: 0, by: {} };
  for (const [name, value] of stats) {
    if (name === 'cmdstat_info' || name === 'cmdstat_config') continue;
    const calls = Number(/calls=(\d+)/.exec(value)?.[1] ?? 0);
    const usec = Number(/usec=(\d+)/.exec(value)?.[1] ?? 0);
    out.commands += calls;
    if (/^cmdstat_(evalsha|eval|fcall)$/.test(name)) {
      out.calls += calls;
      out.usec += usec;
    } else out.by[name.slice(8)] = { calls, usec };
  }
  return out;
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const per1000 = (n) => (n * 1_000) / JOBS;

const redis = await startRedis();
const ticks = clockTicksPerSecond();
try {
  for (const scenario of SCENARIOS) {
    const samples = { base: [], branch: [] };
    for (let round = 0; round < ROUNDS; round++) {
      for (const mode of round % 2 === 0 ? ['base', 'branch'] : ['branch', 'base']) {
        await redis.control.command('FLUSHALL');
        const run = await scenario.run(LIBS[mode], redis.connection);
        await redis.control.command('CONFIG', 'RESETSTAT');
        const cpu0 = processCpuMs(redis.pid, ticks);
        await run.measure();
        const cpu = processCpuMs(redis.pid, ticks) - cpu0;
        const c = await counts(redis.control);
        await run.close();
        samples[mode].push({ ...c, cpu });
      }
    }
    const line = [scenario.id.padEnd(14)];
    const summary = {};
    for (const mode of ['base', 'branch']) {
      const s = samples[mode];
      summary[mode] = {
        usec: median(s.map((x) => per1000(x.usec))),
        perCall: median(s.map((x) => x.usec / x.calls)),
        commands: median(s.map((x) => per1000(x.commands))),
        calls: median(s.map((x) => per1000(x.calls))),
        cpu: median(s.map((x) => per1000(x.cpu))),
      };
    }
    for (const mode of ['base', 'branch']) {
      const m = summary[mode];
      line.push(
        `${mode}: script µs/1000 ${m.usec.toFixed(0)} (${m.perCall.toFixed(1)}/call, ${m.calls.toFixed(0)} calls), ` +
          `commands/1000 ${m.commands.toFixed(0)}, redis CPU ms/1000 ${m.cpu.toFixed(1)}`,
      );
    }
    line.push(
      `change: script µs ${((summary.branch.usec / summary.base.usec - 1) * 100).toFixed(1)}%, ` +
        `redis CPU ${((summary.branch.cpu / summary.base.cpu - 1) * 100).toFixed(1)}%`,
    );
    console.log(line.join('\n  '));
    if (values.detail) {
      for (const mode of ['base', 'branch']) {
        const names = new Set(samples[mode].flatMap((x) => Object.keys(x.by)));
        const rows = [...names]
          .map((n) => ({
            n,
            usec: median(samples[mode].map((x) => per1000(x.by[n]?.usec ?? 0))),
            calls: median(samples[mode].map((x) => per1000(x.by[n]?.calls ?? 0))),
          }))
          .sort((a, b) => b.usec - a.usec);
        console.log(
          `  ${mode} inner commands (µs / calls per 1000 jobs): ${rows.map((r) => `${r.n} ${r.usec.toFixed(0)}/${r.calls.toFixed(0)}`).join(', ')}`,
        );
      }
    }
  }
} finally {
  redis.killNow();
}
console.log(
  `Redis ${redis.version}, ${JOBS} jobs per run, medians of ${ROUNDS} rounds per build; load ${(await import('node:os'))
    .loadavg()
    .map((x) => x.toFixed(2))
    .join(' ')}`,
);
