// The fault-injection suite (issue 14). `npm run faults` runs the quick tier (every row once);
// `npm run faults:soak` runs random faults for `--minutes` (default 60).
//   node test/faults/run.mjs [--tier quick|soak] [--rows a,b] [--seed n] [--scale x] [--minutes m] [--json file] [--strict] [--jobs n]
// --jobs n runs up to n rows side by side (each on its own Redis and ports; a row with its own
// topology — Sentinel, Cluster, network namespace — or marked `alone` always runs alone). Default 1.
// A row whose tool is missing (redis-sentinel mode, redis-cli, faketime) is reported as SKIPPED,
// never as passed; --strict makes a skipped row fail the run. FAULTS_TIMING=1 prints each row's phases.
import { writeFileSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { FINDING_ROWS, ROWS } from './rows.mjs';
import { runRow } from './lib/run-row.mjs';

function arg(name, fallback) {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : fallback;
}

const tier = arg('tier', 'quick');
const only = arg('rows', '').split(',').filter(Boolean);
const seed = Number(arg('seed', Date.now() % 100_000));
const out = arg('json', `test/faults/results/last-${tier}.json`);
// The quick tier (CI) runs half the jobs per row; --scale 1 runs the full counts.
const scale = Number(arg('scale', tier === 'quick' ? 0.5 : 1));
const jobs = Math.max(1, Math.floor(Number(arg('jobs', 1)) || 1));

function line(r) {
  const m = r.metrics;
  return (
    `${r.pass ? 'PASS' : 'FAIL'} ${r.id.padEnd(30)} jobs ${m.jobs} (ack ${m.adds.ack}, refused ${m.adds.error}, unknown ${m.adds.unknown}) ` +
    `faults ${m.faults} lost ${m.lost} stuck ${m.stuck} dup ${m.duplicated} (unexplained ${m.unexplainedDuplicates}) ` +
    `failed ${m.failed} late-rejected ${m.lateRejected} stalled ${m.stalled} recovery ${m.recoveryMs} ms ` +
    `tput ${m.throughput.duringPerSec}/${m.throughput.afterPerSec} per s p99 ${m.latencyMs.p99} ms (${m.seconds} s)` +
    (r.failures.length ? `\n     ${r.failures.join('\n     ')}` : '')
  );
}

/** Runs one row and prints its line; never throws (a crashed row is a failed result). */
async function runOne(row) {
  let result;
  try {
    result = await runRow(row, { seed, scale });
  } catch (err) {
    result = { id: row.id, title: row.title, pass: false, failures: [`row crashed: ${err?.stack ?? err}`], metrics: undefined };
  }
  if (result.skipped) {
    console.log(`SKIP ${row.id.padEnd(30)} ${result.skipped} (NOT run, NOT passed)`);
    return { ...result, promise: row.promise };
  }
  if (result.metrics) {
    delete result.metrics.effects;
    delete result.metrics.starts;
    delete result.metrics.records;
    console.log(line(result));
  } else console.log(`FAIL ${row.id}: ${result.failures[0]}`);
  return { ...result, promise: row.promise };
}

async function main() {
  const rows = tier === 'soak' ? (await import('./soak.mjs')).soakRows(Number(arg('minutes', 60))) : ROWS;
  const selected = only.length ? [...rows, ...FINDING_ROWS].filter((r) => only.includes(r.id)) : rows;
  const t0 = Date.now();
  const results = new Array(selected.length);
  console.log(`fault suite, tier ${tier}, seed ${seed}, scale ${scale}, ${selected.length} rows, ${jobs} at a time`);
  const running = new Set();
  let exclusive = false;
  let next = 0;
  // A row with its own topology (Sentinel, Cluster, a network namespace) or timed criteria runs alone.
  const isAlone = (row) => jobs > 1 && (!!row.topology || !!row.alone);
  // Under --jobs, the rows that share the machine go first, then the ones that run alone: an alone
  // row among the others would make every running row finish first (results keep the table's order).
  const order = selected.map((_, i) => i);
  if (jobs > 1) order.sort((a, b) => Number(isAlone(selected[a])) - Number(isAlone(selected[b])) || a - b);
  await new Promise((resolve) => {
    const fill = () => {
      if (next === selected.length && running.size === 0) return resolve();
      while (next < selected.length && !exclusive && running.size < jobs) {
        const row = selected[order[next]];
        const alone = isAlone(row);
        if (alone && running.size > 0) return;
        const index = order[next++];
        exclusive = alone;
        const run = runOne(row).then((result) => {
          results[index] = result;
          running.delete(run);
          if (alone) exclusive = false;
          fill();
        });
        running.add(run);
      }
    };
    fill();
  });
  const seconds = Math.round((Date.now() - t0) / 1000);
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, JSON.stringify({ tier, seed, scale, seconds, at: new Date().toISOString(), results }, null, 2) + '\n');
  const skipped = results.filter((r) => r.skipped);
  const failed = results.filter((r) => !r.pass && !r.skipped).length;
  console.log(`${results.length - failed - skipped.length}/${results.length} rows passed in ${seconds} s; figures in ${out}`);
  if (skipped.length) {
    console.log(`!!! ${skipped.length} rows SKIPPED, not passed: ${skipped.map((r) => `${r.id} (${r.skipped})`).join(', ')}`);
  }
  // A skipped row fails the run only with --strict (CI machines without the tool still run the rest).
  process.exit(failed || (skipped.length && process.argv.includes('--strict')) ? 1 : 0);
}

await main();
