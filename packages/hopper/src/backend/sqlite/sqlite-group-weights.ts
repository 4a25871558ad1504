/**
 * Weighted limits in the grouped claim on SQLite (docs/groups.md, docs/limits.md): a group's
 * weighted limiter (its own with `weight: 'cost'`, else the queue's weighted group default) and
 * the queue's weighted rate limit on a queue that uses groups. The counterpart of takeFitting in
 * includes/claimgroups.lua and of the group windows of includes/window.lua.
 *
 * A group's weighted window is rows of `group_weighted_window` (one per counted start, with its
 * weight); the queue's is `weighted_window` (sqlite-limits.ts). Jobs are taken one at a time from
 * the head while each one's cost fits every window it counts in; the first that does not fit
 * stops its group (parked until it fits: FIFO, lighter jobs behind it wait too) or, for the
 * queue's window, the whole walk. A job heavier than a whole window could never fit: it is taken
 * uncounted and marked for the worker to fail it with the reason.
 */
import type { JobRow, Tx } from './sqlite-ops.js';
import { jobCost, recordWeights, windowRoomIn } from './sqlite-limits.js';
import { readyHead } from './sqlite-rows.js';
import type { GroupDefaults, GroupRow } from './sqlite-groups.js';

/** Schema of the group windows (migration 6, database.ts). */
export const GROUP_WEIGHTS_SCHEMA = `
    ALTER TABLE groups ADD COLUMN lwt INTEGER;
    CREATE TABLE group_weighted_window (
      qid INTEGER NOT NULL,
      grp TEXT NOT NULL,
      at INTEGER NOT NULL,
      member TEXT NOT NULL,
      weight REAL NOT NULL
    );
    CREATE INDEX group_weighted_window_by_group ON group_weighted_window (qid, grp, at);
`;

/** A weighted window as a claim reads it: the weight it holds (`use`, growing with each job taken), its max and duration. */
export interface Window {
  use: number;
  max: number;
  dur: number;
}

/** A group's weighted window, with its group. */
export interface GroupWindow extends Window {
  g: string;
}

/** What a grouped claim took under weighted windows: weights by job id, and the jobs marked too heavy. */
export interface Weights {
  /** Weights counted in the queue's window, by job id. */
  q: Map<string, number>;
  /** Weights counted in their group's window, by job id. */
  g: Map<string, { g: string; w: number }>;
  /** Jobs heavier than a whole window: 'max:durationMs' (':group' added for a group's window). */
  heavy: Map<string, string>;
}

export function newWeights(): Weights {
  return { q: new Map(), g: new Map(), heavy: new Map() };
}

/** The weighted limit of group `row` (its own limiter, else the queue's default), or undefined when its limit counts jobs. */
export function weightedLimitOf(
  row: Pick<GroupRow, 'lm' | 'ld' | 'lwt'> | undefined,
  defaults: GroupDefaults,
): { max: number; duration: number } | undefined {
  if (row && row.lm !== null) return row.lwt === 1 ? { max: row.lm, duration: row.ld ?? 0 } : undefined;
  if (defaults.glm !== undefined && defaults.glw === 1) return { max: defaults.glm, duration: defaults.gld ?? 0 };
  return undefined;
}

/** Reads group `g`'s weighted window (its entries out of the window dropped first). */
export function groupWindow(tx: Tx, g: string, max: number, dur: number): GroupWindow {
  tx.s.stmt('DELETE FROM group_weighted_window WHERE qid = ? AND grp = ? AND at <= ?').run(tx.qid, g, tx.now - dur);
  const { use } = tx.s.stmt('SELECT TOTAL(weight) AS use FROM group_weighted_window WHERE qid = ? AND grp = ?').get(tx.qid, g) as {
    use: number;
  };
  return { use, max, dur, g };
}

/**
 * When group `gw.g`'s window, holding `gw.use`, has room for `w` more (ms from now, at least 1;
 * windowRoomIn): walks its oldest 100 entries; past them, the time the 100th leaves.
 */
export function groupRoomIn(tx: Tx, gw: GroupWindow, w: number): number {
  const oldest = tx.s
    .stmt('SELECT at, weight FROM group_weighted_window WHERE qid = ? AND grp = ? ORDER BY at LIMIT 100')
    .all(tx.qid, gw.g) as { at: number; weight: number }[];
  return windowRoomIn(tx.now, oldest, gw.use, w, gw.max, gw.dur);
}

/**
 * Takes up to `room` ready jobs of group `g` (null: the jobs without a group), waiting first then
 * by priority, one at a time while each one's cost fits `gw` (its group's window) and `qw` (the
 * queue's); either may be undefined. Taken jobs leave the ready jobs at once (state 'claiming').
 * Returns them, and when the head job did not fit: which window stopped it and its cost.
 */
export function takeFitting(
  tx: Tx,
  g: string | null,
  room: number,
  gw: GroupWindow | undefined,
  qw: Window | undefined,
  weights: Weights,
): { rows: JobRow[]; stop?: 'g' | 'q'; cost?: number } {
  if (room <= 0) return { rows: [] };
  // The head `room` jobs in claim order: no more can be taken.
  const candidates = readyHead(tx, g, room);
  const rows: JobRow[] = [];
  for (const row of candidates) {
    const w = jobCost(row.opts);
    if (gw && w > gw.max) {
      weights.heavy.set(row.id, `${gw.max}:${gw.dur}:${gw.g}`);
    } else if (qw && w > qw.max) {
      weights.heavy.set(row.id, `${qw.max}:${qw.dur}`);
    } else if (gw && gw.use + w > gw.max) {
      return { rows, stop: 'g', cost: w };
    } else if (qw && qw.use + w > qw.max) {
      return { rows, stop: 'q', cost: w };
    } else {
      if (gw) {
        gw.use += w;
        weights.g.set(row.id, { g: gw.g, w });
      }
      if (qw) {
        qw.use += w;
        weights.q.set(row.id, w);
      }
    }
    tx.set(row.id, { state: 'claiming' });
    rows.push(row);
  }
  return { rows };
}

/**
 * Records the weights of a grouped claim's counted starts (member `<id>:<attempt>`): in their
 * groups' windows, and in the queue's weighted window when it has one (`queueDuration`).
 */
export function recordGroupedWeights(
  tx: Tx,
  jobs: { id: string; attemptsStarted: number }[],
  weights: Weights,
  queueDuration: number | undefined,
): void {
  const queued: { member: string; weight: number }[] = [];
  for (const { id, attemptsStarted } of jobs) {
    const member = `${id}:${attemptsStarted}`;
    const taken = weights.g.get(id);
    if (taken) {
      tx.s
        .stmt('INSERT INTO group_weighted_window (qid, grp, at, member, weight) VALUES (?, ?, ?, ?, ?)')
        .run(tx.qid, taken.g, tx.now, member, taken.w);
    }
    const w = weights.q.get(id);
    if (w !== undefined) queued.push({ member, weight: w });
  }
  if (queueDuration !== undefined && queued.length > 0) recordWeights(tx, queueDuration, queued);
}
