/**
 * Metrics on SQLite (docs/metrics.md), the counterpart of includes/counters.lua,
 * recordMetrics.lua and recordLatency.lua:
 * - exact outcome counters per job name (`metrics_counters`), noted by a write transaction while
 *   it runs (`Tx.count`) and written once before it commits (`flushCounts`), so they change in
 *   the same transaction as the state change they count. Label cardinality is bounded as on
 *   Redis: at most 50 job names per queue are admitted (`metrics_labels`, kind `n`: the first
 *   seen, at add or at their first outcome); the others count under the name `other`.
 * - per-minute counts of finished jobs in BullMQ's layout (`metrics_meta`: count, prevTS,
 *   prevCount; `metrics_points`: one point per closed minute, newest = highest seq, at most
 *   maxDataPoints).
 * - latency histograms (`metrics_histograms`: non-cumulative bucket counts and sums, slot -1 the
 *   sum) labelled by admitted job names or scheduler ids (kind `s`, at most 50), and each
 *   scheduler's last run (`metrics_last_runs`, kept only when newer than the stored one).
 */
import type {
  ExactMetricsRecord,
  LastRunOutcome,
  LatencyEntry,
  LatencyKind,
  MetricsBucket,
  MetricsRecord,
  MetricsType,
  SchedulerLastRun,
} from '../backend.js';
import type { SqliteStore } from './database.js';
import type { Tx } from './sqlite-ops.js';

/** Most labels per queue and kind (job names, scheduler ids), as COUNTER_NAMES_MAX in counters.lua. */
const NAMES_MAX = 50;
/** The label of the names past the limit. */
const OTHER = 'other';
/** Names an add call admits at most (a bulk add of many names admits the others at their first outcome). */
const ADMIT_PER_CALL = 4;
/** Most buckets per histogram entry (as recordLatency.lua). */
const MAX_BUCKETS = 32;

/** The tables holding a queue's metrics (deleted with the queue by obliterate). */
export const METRICS_TABLES = [
  'metrics_counters',
  'metrics_labels',
  'metrics_histograms',
  'metrics_last_runs',
  'metrics_meta',
  'metrics_points',
];

/** Schema of migration 6 (database.ts). */
export const METRICS_SCHEMA = `
    CREATE TABLE metrics_counters (
      qid INTEGER NOT NULL,
      outcome TEXT NOT NULL,
      name TEXT NOT NULL,
      count INTEGER NOT NULL,
      PRIMARY KEY (qid, outcome, name)
    );
    CREATE TABLE metrics_labels (
      qid INTEGER NOT NULL,
      kind TEXT NOT NULL,
      label TEXT NOT NULL,
      PRIMARY KEY (qid, kind, label)
    );
    CREATE TABLE metrics_histograms (
      qid INTEGER NOT NULL,
      kind TEXT NOT NULL,
      label TEXT NOT NULL,
      slot INTEGER NOT NULL,
      value INTEGER NOT NULL,
      PRIMARY KEY (qid, kind, label, slot)
    );
    CREATE TABLE metrics_last_runs (
      qid INTEGER NOT NULL,
      scheduler TEXT NOT NULL,
      finished_at INTEGER NOT NULL,
      duration_ms INTEGER NOT NULL,
      outcome TEXT NOT NULL,
      PRIMARY KEY (qid, scheduler)
    );
    CREATE TABLE metrics_meta (
      qid INTEGER NOT NULL,
      type TEXT NOT NULL,
      count INTEGER NOT NULL,
      prev_ts INTEGER,
      prev_count INTEGER NOT NULL,
      PRIMARY KEY (qid, type)
    );
    CREATE TABLE metrics_points (
      qid INTEGER NOT NULL,
      type TEXT NOT NULL,
      seq INTEGER NOT NULL,
      value INTEGER NOT NULL,
      PRIMARY KEY (qid, type, seq)
    );
`;

/** An outcome counted per job name (see countOutcome in includes/counters.lua). */
export type Outcome =
  'completed' | 'failed' | 'retried' | 'stalled' | 'rate-limited' | 'deduplicated' | 'cancelled' | 'timed-out' | 'dead-lettered';

/** The outcomes a transaction noted: `<qid>\0<outcome>\0<name>` -> count (shared by the queues of one call). */
export type NotedCounts = Map<string, number>;

/** Notes `by` jobs of name `name` with `outcome` in queue `qid` (written by flushCounts). */
export function noteCount(counts: NotedCounts, qid: number, outcome: Outcome, name: string, by = 1): void {
  const key = `${qid}\u0000${outcome}\u0000${name}`;
  counts.set(key, (counts.get(key) ?? 0) + by);
}

/** Label kinds of metrics_labels: job names (counters, wait and run histograms) and scheduler ids. */
type LabelKind = 'n' | 's';

/** Admits `label` if there is room; returns the label its counts go under (itself or `other`). */
function admit(s: SqliteStore, qid: number, kind: LabelKind, label: string): string {
  if (label === OTHER) return label;
  if (s.stmt('SELECT 1 FROM metrics_labels WHERE qid = ? AND kind = ? AND label = ?').get(qid, kind, label)) return label;
  const { n } = s.stmt('SELECT COUNT(*) AS n FROM metrics_labels WHERE qid = ? AND kind = ?').get(qid, kind) as { n: number };
  if (n >= NAMES_MAX) return OTHER;
  s.stmt('INSERT INTO metrics_labels (qid, kind, label) VALUES (?, ?, ?)').run(qid, kind, label);
  return label;
}

/** Writes the noted outcomes to their queues' counters (in the transaction that noted them). */
export function flushCounts(s: SqliteStore, counts: NotedCounts): void {
  if (counts.size === 0) return;
  for (const [key, by] of counts) {
    const [qidText, outcome, name] = key.split('\u0000');
    const qid = Number(qidText);
    // The steady state: one UPDATE. A counter seen for the first time checks its name's admission.
    const bumped = s
      .stmt('UPDATE metrics_counters SET count = count + ? WHERE qid = ? AND outcome = ? AND name = ?')
      .run(by, qid, outcome, name);
    if (bumped.changes > 0) continue;
    const label = admit(s, qid, 'n', name);
    s.stmt(
      'INSERT INTO metrics_counters (qid, outcome, name, count) VALUES (?, ?, ?, ?) ON CONFLICT (qid, outcome, name) DO UPDATE SET count = count + excluded.count',
    ).run(qid, outcome, label, by);
  }
  counts.clear();
}

/**
 * Admits the first few distinct names of the jobs an add call added while there is room, so that
 * exporters show every outcome's series at 0 before the name's first outcome (admitNames).
 */
export function admitNames(tx: Tx, names: string[]): void {
  const seen = new Set<string>();
  for (const name of names) {
    if (seen.has(name)) continue;
    seen.add(name);
    if (seen.size > ADMIT_PER_CALL) return;
    if (name !== OTHER && admit(tx.s, tx.qid, 'n', name) === OTHER) return;
  }
}

/** Adds per-minute counts (oldest minute first) to the metrics of `type` (recordMetrics.lua). */
export function recordMetrics(tx: Tx, type: MetricsType, buckets: MetricsBucket[], maxPoints: number): void {
  if (!Number.isInteger(maxPoints) || maxPoints < 1) throw new Error('recordMetrics: expected maxDataPoints >= 1 (an integer)');
  for (const b of buckets) {
    if (![b.minute, b.first, b.count].every((v) => Number.isFinite(v))) throw new Error('recordMetrics: bucket values must be numbers');
  }
  const { s, qid } = tx;
  const meta = s.stmt('SELECT count, prev_ts, prev_count FROM metrics_meta WHERE qid = ? AND type = ?').get(qid, type) as
    { count: number; prev_ts: number | null; prev_count: number } | undefined;
  let count = meta?.count ?? 0;
  let prevTS = meta?.prev_ts ?? null;
  let prevCount = meta?.prev_count ?? 0;
  let pushed = false;
  const top = (): number =>
    (s.stmt('SELECT MAX(seq) AS top FROM metrics_points WHERE qid = ? AND type = ?').get(qid, type) as { top: number | null }).top ?? 0;
  for (const { minute, first, count: n } of buckets) {
    if (prevTS === null) {
      prevTS = first;
      prevCount = count;
    } else if (minute > Math.floor(prevTS / 60_000)) {
      // The open minute closes: its count, then a 0 per empty minute between (at most maxPoints in all).
      const points = Math.min(minute - Math.floor(prevTS / 60_000), maxPoints);
      const seq = top();
      s.stmt('INSERT INTO metrics_points (qid, type, seq, value) VALUES (?, ?, ?, ?)').run(qid, type, seq + 1, count - prevCount);
      if (points > 1) {
        s.stmt(
          `WITH RECURSIVE z(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM z WHERE i < ?)
           INSERT INTO metrics_points (qid, type, seq, value) SELECT ?, ?, ? + i, 0 FROM z`,
        ).run(points - 1, qid, type, seq + 1);
      }
      pushed = true;
      prevTS = first;
      prevCount = count;
    }
    count += n;
  }
  if (pushed) {
    // Keeps the newest maxPoints (LTRIM 0, maxPoints - 1).
    s.stmt('DELETE FROM metrics_points WHERE qid = ? AND type = ? AND seq <= ?').run(qid, type, top() - maxPoints);
  }
  s.stmt(
    `INSERT INTO metrics_meta (qid, type, count, prev_ts, prev_count) VALUES (?, ?, ?, ?, ?)
     ON CONFLICT (qid, type) DO UPDATE SET count = excluded.count, prev_ts = excluded.prev_ts, prev_count = excluded.prev_count`,
  ).run(qid, type, count, prevTS, prevCount);
}

/** Reads the totals and the data points of rank range `start..end` (newest first; LRANGE's indexes, negative from the end). */
export function readMetrics(s: SqliteStore, qid: number, type: MetricsType, start: number, end: number): MetricsRecord {
  const meta = s.stmt('SELECT count, prev_ts, prev_count FROM metrics_meta WHERE qid = ? AND type = ?').get(qid, type) as
    { count: number; prev_ts: number | null; prev_count: number } | undefined;
  const { n } = s.stmt('SELECT COUNT(*) AS n FROM metrics_points WHERE qid = ? AND type = ?').get(qid, type) as { n: number };
  let from = start < 0 ? start + n : start;
  let to = end < 0 ? end + n : end;
  if (from < 0) from = 0;
  if (to > n - 1) to = n - 1;
  const data =
    from > to
      ? []
      : (
          s
            .stmt('SELECT value FROM metrics_points WHERE qid = ? AND type = ? ORDER BY seq DESC LIMIT ? OFFSET ?')
            .all(qid, type, to - from + 1, from) as { value: number }[]
        ).map((r) => r.value);
  return { count: meta?.count ?? 0, prevTS: meta?.prev_ts ?? 0, prevCount: meta?.prev_count ?? 0, data, length: n };
}

const KIND_CODE: Record<LatencyKind, string> = { wait: 'w', run: 'r', lateness: 'l' };
const CODE_KIND: Record<string, LatencyKind> = { w: 'wait', r: 'run', l: 'lateness' };

/** Adds latency histogram counts and schedulers' last runs (recordLatency.lua); validates all before writing. */
export function recordLatency(tx: Tx, entries: LatencyEntry[], lastRuns: SchedulerLastRun[]): void {
  for (const e of entries) {
    if (!(e.kind in KIND_CODE)) throw new Error('recordLatency: histogram must be wait, run or lateness');
    const values = [e.sum, ...e.counts];
    if (values.some((v) => !Number.isFinite(v) || v < 0)) throw new Error('recordLatency: counts must be non-negative numbers');
    if (e.counts.length < 1 || e.counts.length > MAX_BUCKETS)
      throw new Error('recordLatency: counts must be a sum and 1..32 bucket counts');
  }
  for (const r of lastRuns) {
    if (![r.finishedAt, r.durationMs].every((v) => Number.isFinite(v) && v >= 0))
      throw new Error('recordLatency: a last run is finishedAt,durationMs,outcome');
  }
  const { s, qid } = tx;
  const add = s.stmt(
    `INSERT INTO metrics_histograms (qid, kind, label, slot, value) VALUES (?, ?, ?, ?, ?)
     ON CONFLICT (qid, kind, label, slot) DO UPDATE SET value = value + excluded.value`,
  );
  for (const e of entries) {
    const label = admit(s, qid, e.kind === 'lateness' ? 's' : 'n', e.label);
    const code = KIND_CODE[e.kind];
    const sum = Math.floor(Math.round(e.sum));
    if (sum > 0) add.run(qid, code, label, -1, sum);
    e.counts.forEach((c, i) => {
      if (c > 0) add.run(qid, code, label, i, Math.floor(c));
    });
  }
  for (const r of lastRuns) {
    const label = admit(s, qid, 's', r.scheduler);
    // Workers flush in any order: the newest by finish time wins.
    s.stmt(
      `INSERT INTO metrics_last_runs (qid, scheduler, finished_at, duration_ms, outcome) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (qid, scheduler) DO UPDATE SET finished_at = excluded.finished_at, duration_ms = excluded.duration_ms,
         outcome = excluded.outcome WHERE finished_at <= excluded.finished_at`,
    ).run(qid, label, r.finishedAt, Math.round(r.durationMs), r.outcome);
  }
}

/** Reads the queue's exact counters, admitted names, histograms and schedulers' last runs. */
export function readExactMetrics(s: SqliteStore, qid: number): ExactMetricsRecord {
  const counters = (
    s.stmt('SELECT outcome, name, count FROM metrics_counters WHERE qid = ?').all(qid) as { outcome: string; name: string; count: number }[]
  ).map((r) => ({ outcome: r.outcome, name: r.name, count: r.count }));
  const names = (s.stmt("SELECT label FROM metrics_labels WHERE qid = ? AND kind = 'n'").all(qid) as { label: string }[])
    .map((r) => r.label)
    .sort();
  const byLabel = new Map<string, ExactMetricsRecord['histograms'][number]>();
  const rows = s.stmt('SELECT kind, label, slot, value FROM metrics_histograms WHERE qid = ? ORDER BY kind, label, slot').all(qid) as {
    kind: string;
    label: string;
    slot: number;
    value: number;
  }[];
  for (const row of rows) {
    const kind = CODE_KIND[row.kind];
    if (!kind) continue;
    const id = `${kind}\u0000${row.label}`;
    let h = byLabel.get(id);
    if (!h) {
      h = { kind, label: row.label, sum: 0, counts: [] };
      byLabel.set(id, h);
    }
    if (row.slot < 0) h.sum = row.value;
    else {
      while (h.counts.length <= row.slot) h.counts.push(0);
      h.counts[row.slot] = row.value;
    }
  }
  const lastRuns = (
    s.stmt('SELECT scheduler, finished_at, duration_ms, outcome FROM metrics_last_runs WHERE qid = ?').all(qid) as {
      scheduler: string;
      finished_at: number;
      duration_ms: number;
      outcome: LastRunOutcome;
    }[]
  ).map((r) => ({ scheduler: r.scheduler, finishedAt: r.finished_at, durationMs: r.duration_ms, outcome: r.outcome }));
  return { counters, names, histograms: [...byLabel.values()], lastRuns };
}
