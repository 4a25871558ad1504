// Prints the figures of a results file as the Markdown table docs/reliability.md publishes.
//   node test/faults/report.mjs [test/faults/results/last-quick.json]
import { readFileSync } from 'node:fs';

const file = process.argv[2] ?? 'test/faults/results/last-quick.json';
const run = JSON.parse(readFileSync(file, 'utf8'));
console.log(`Tier ${run.tier}, seed ${run.seed}, ${run.at}, ${run.seconds} s in all.\n`);
console.log(
  '| row | result | jobs (acked / refused / unknown) | faults | lost | duplicated (unexplained) | stuck | failed | late completions rejected | stalls | recovery | p99 latency |',
);
console.log('|---|---|---|---|---|---|---|---|---|---|---|---|');
for (const r of run.results) {
  const m = r.metrics;
  if (r.skipped) {
    console.log(`| \`${r.id}\` | **${r.skipped}** | | | | | | | | | | |`);
    continue;
  }
  if (!m) {
    console.log(`| \`${r.id}\` | crashed | | | | | | | | | | |`);
    continue;
  }
  console.log(
    `| \`${r.id}\` | ${r.pass ? 'pass' : 'FAIL'} | ${m.jobs} (${m.adds.ack} / ${m.adds.error} / ${m.adds.unknown}) | ${m.faults} | ${m.lost} | ` +
      `${m.duplicated} (${m.unexplainedDuplicates}) | ${m.stuck} | ${m.failed} | ${m.lateRejected} | ${m.stalled} | ${(m.recoveryMs / 1000).toFixed(1)} s | ` +
      `${(m.latencyMs.p99 / 1000).toFixed(1)} s |`,
  );
}
