// The checker: from the producer's ledger, the processors' effects file and the queue's final
// states, counts what a fault did. Definitions (issue 14):
//   lost        acknowledged add, no effect, not failed (nor completed) after the drain
//   stuck       a non-terminal state after quiescence and the drain
//   duplicated  more than one effect for one id; explained when every effect but one came from a
//               process a fault hit (or, for Redis faults, was recorded inside the fault's window)
//   unexpected  an effect for an id never added, or whose add was refused (a row may declare ids
//               the engine creates itself, such as scheduler occurrences: `unledgered`)
//   late rejected  completions of an attempt that no longer held the job, refused by the fence
import { readFileSync, existsSync } from 'node:fs';

export function readRecords(file) {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line));
}

const TERMINAL = new Set(['completed', 'failed']);
const LATE = /result was not recorded because this attempt no longer holds it/;

function pct(sorted, p) {
  if (!sorted.length) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/**
 * @param {{ ledger, records, states: Map<string,string>, faults, windows, healAt, startAt, endAt,
 *           removeOnComplete?: boolean, unledgered?: (id: string) => boolean }} run
 */
export function check(run) {
  const { ledger, records, states, windows = [], healAt, startAt, endAt } = run;
  // A processor may report a fault it causes itself (an event-loop block).
  const faults = [...run.faults, ...records.filter((r) => r.t === 'fault').map((r) => ({ kind: r.kind, pid: r.pid, at: r.at }))];
  const byId = new Map(ledger.map((e) => [e.id, e]));
  const faultedPids = new Set(faults.filter((f) => f.pid).map((f) => f.pid));
  const inWindow = (at) => windows.some((w) => at >= w.from && at <= w.to);

  const effects = new Map();
  const starts = new Map();
  const completedAt = new Map();
  const counts = { stalled: 0, lateRejected: 0 };
  const errorNames = {};
  const unexpected = new Set();
  for (const r of records) {
    if (r.t === 'effect' || r.t === 'start') {
      const map = r.t === 'effect' ? effects : starts;
      if (!map.has(r.id)) map.set(r.id, []);
      map.get(r.id).push(r);
      const added = byId.get(r.id);
      if (added ? added.outcome === 'error' : !run.unledgered?.(r.id)) unexpected.add(r.id);
    } else if (r.t === 'completed') {
      if (!completedAt.has(r.id)) completedAt.set(r.id, r.at);
    } else if (r.t === 'stalled') counts.stalled++;
    else if (r.t === 'error') {
      errorNames[r.name] = (errorNames[r.name] ?? 0) + 1;
      if (LATE.test(r.message)) counts.lateRejected++;
    }
  }

  const outcome = { ack: 0, error: 0, unknown: 0, pending: 0 };
  for (const e of ledger) outcome[e.outcome]++;

  const lost = [];
  const stuck = [];
  const recordsLost = [];
  const failed = [];
  for (const e of ledger) {
    const state = states.get(e.id) ?? 'unknown';
    const ran = effects.has(e.id);
    if (state === 'failed') failed.push(e.id);
    if (!TERMINAL.has(state) && state !== 'unknown') stuck.push(e.id);
    if (e.outcome !== 'ack') continue;
    if (state === 'unknown' && !(run.removeOnComplete && completedAt.has(e.id))) recordsLost.push(e.id);
    if (!ran && !TERMINAL.has(state)) lost.push(e.id);
  }

  // Each claim starts a new attempt: two runs of one job under the same attempt number mean a job
  // was put back while it ran (an engine defect, whatever the fault).
  const reusedAttempts = [];
  for (const [id, list] of starts) {
    const seen = new Set();
    for (const r of list) {
      if (seen.has(r.attempt)) reusedAttempts.push(id);
      seen.add(r.attempt);
    }
  }

  let duplicated = 0;
  const unexplained = [];
  for (const [id, list] of effects) {
    if (list.length < 2) continue;
    duplicated++;
    const healthy = list.filter((r) => !faultedPids.has(r.pid) && !inWindow(r.at));
    if (healthy.length > 1) unexplained.push(id);
  }

  // Recovery: from each fault on a process to the completion of the jobs it held.
  let recoveryMs = 0;
  for (const f of faults) {
    if (!f.pid) continue;
    for (const [id, list] of starts) {
      if (!list.some((r) => r.pid === f.pid && r.at <= (f.until ?? f.at))) continue;
      const done = completedAt.get(id);
      if (done && done > f.at) recoveryMs = Math.max(recoveryMs, done - f.at);
    }
  }
  for (const w of windows) {
    const firstAfter = [...completedAt.values()].filter((t) => t > w.to).sort((a, b) => a - b)[0];
    if (firstAfter) recoveryMs = Math.max(recoveryMs, firstAfter - w.to);
  }

  const latencies = [];
  let during = 0;
  let after = 0;
  for (const [id, at] of completedAt) {
    const e = byId.get(id);
    if (e) latencies.push(at - e.t0);
    if (at <= healAt) during++;
    else after++;
  }
  latencies.sort((a, b) => a - b);
  return {
    jobs: ledger.length,
    adds: outcome,
    faults: faults.length + windows.length,
    lost: lost.length,
    stuck: stuck.length,
    recordsLost: recordsLost.length,
    duplicated,
    unexplainedDuplicates: unexplained.length,
    unexpected: unexpected.size,
    reusedAttempts: reusedAttempts.length,
    failed: failed.length,
    lateRejected: counts.lateRejected,
    stalled: counts.stalled,
    errors: errorNames,
    recoveryMs,
    throughput: {
      duringPerSec: round((during * 1000) / Math.max(1, healAt - startAt)),
      afterPerSec: round((after * 1000) / Math.max(1, endAt - healAt)),
    },
    latencyMs: { p50: pct(latencies, 50), p99: pct(latencies, 99), max: latencies.at(-1) ?? 0 },
    samples: {
      reusedAttempts: reusedAttempts.slice(0, 5),
      lost: lost.slice(0, 5),
      stuck: stuck.slice(0, 5),
      unexplained: unexplained.slice(0, 5),
      recordsLost: recordsLost.slice(0, 5),
    },
    effects,
    starts,
    records,
  };
}

function round(x) {
  return Math.round(x * 10) / 10;
}
