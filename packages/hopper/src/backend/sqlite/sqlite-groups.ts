/**
 * Fair groups on SQLite (the job option `group`, docs/groups.md): the counterpart of
 * includes/groups.lua, the group part of includes/claim.lua and configureGroup.lua, whose
 * contracts they follow.
 *
 * A grouped job is an ordinary job row with `grp` set; its group is a row of `groups`:
 *   st     '' idle (no backlog), 'r' in the ring, 'c' parked at its concurrency, 'l' parked by
 *          its rate limit until `reopen`, 'p' paused
 *   turn   its place in the ring (rows with st 'r', ordered by turn: the head is the smallest)
 *   q      jobs left in its current turn (deficit round-robin; NULL: a full turn)
 *   c, lm/ld, ms, w   its own concurrency, limiter, maxSize, weight (NULL: the queue's default)
 * The row with id '' stands for the jobs without a group (it takes its turn as one group) and
 * exists once the queue has used groups. A group's active jobs are counted from the jobs table
 * (no counter to keep in step); a group parked at its concurrency goes back to the ring at the
 * next claim that finds it a free slot. A group's starts are rows of `group_window`.
 */
import { GroupMaxSizeExceededError, InvalidOptionsError } from '../../job/errors.js';
import type { JobRow, Tx } from './sqlite-ops.js';
import { readLimits, type QueueLimits } from './sqlite-limits.js';
import { readyHead } from './sqlite-rows.js';
import {
  groupRoomIn,
  groupWindow,
  takeFitting,
  weightedLimitOf,
  type GroupWindow,
  type Weights,
  type Window,
} from './sqlite-group-weights.js';

/** A group row as stored. */
export interface GroupRow {
  id: string;
  st: string;
  turn: number | null;
  q: number | null;
  reopen: number | null;
  c: number | null;
  lm: number | null;
  ld: number | null;
  ms: number | null;
  w: number | null;
  /** Its limiter is weighted (1): each job counts its cost. */
  lwt: number | null;
}

/** The queue's group defaults (settings fields gcon, glm/gld, gms, gwt). */
export interface GroupDefaults {
  gcon?: number;
  glm?: number;
  gld?: number;
  gms?: number;
  gwt?: number;
  /** The default limiter is weighted (1): each job counts its cost. */
  glw?: number;
}

/** The group setting fields configureGroup writes, by column. */
const GROUP_FIELDS = new Set(['c', 'lm', 'ld', 'ms', 'w', 'lwt']);
/** The group default fields configureQueue writes. */
export const GROUP_DEFAULT_FIELDS = new Set(['gcon', 'glm', 'gld', 'gms', 'gwt', 'glw']);

/** The group named in a job's options JSON (and its own maxSize), or undefined. */
export function groupOfOpts(opts: string): { id: string; maxSize: number | undefined } | undefined {
  if (opts === '' || !opts.includes('"group":')) return undefined;
  try {
    const group = (JSON.parse(opts) as { group?: { id?: unknown; maxSize?: unknown } }).group;
    if (group && typeof group.id === 'string') {
      return { id: group.id, maxSize: typeof group.maxSize === 'number' ? group.maxSize : undefined };
    }
  } catch {
    // Options not written by Hopper: no group.
  }
  return undefined;
}

function groupRow(tx: Tx, g: string): GroupRow | undefined {
  return tx.s.stmt('SELECT * FROM groups WHERE qid = ? AND id = ?').get(tx.qid, g) as GroupRow | undefined;
}

function setGroup(tx: Tx, g: string, fields: Record<string, string | number | null>): void {
  const names = Object.keys(fields);
  tx.s
    .stmt(`UPDATE groups SET ${names.map((n) => `${n} = ?`).join(', ')} WHERE qid = ? AND id = ?`)
    .run(...names.map((n) => fields[n]), tx.qid, g);
}

export function hasSettings(row: GroupRow): boolean {
  return row.c !== null || row.lm !== null || row.ms !== null || row.w !== null;
}

/** Whether the queue has used groups (its claims then go round the ring). */
export function groupsOn(tx: Tx): boolean {
  return tx.s.stmt("SELECT 1 FROM groups WHERE qid = ? AND id = ''").get(tx.qid) !== undefined;
}

/** Turns groups on for the queue (once): the jobs without a group join the ring first. */
function enableGroups(tx: Tx): void {
  if (groupsOn(tx)) return;
  tx.s.stmt("INSERT INTO groups (qid, id, st, turn) VALUES (?, '', 'r', ?)").run(tx.qid, tx.counter());
}

/** Puts group `g` at the tail of the ring. */
function toTail(tx: Tx, g: string): void {
  setGroup(tx, g, { st: 'r', turn: tx.counter() });
}

/** A group that got a ready job joins the ring if it was idle (includes/groups wakeGroup). */
export function wakeGroup(tx: Tx, g: string): void {
  const row = groupRow(tx, g);
  if (row && row.st !== '') {
    // A group paused before the queue used groups (its job rows are in the jobs table, as every
    // job's): claims must go round the ring now, or the plain claim would take the paused job.
    if (row.st === 'p') enableGroups(tx);
    return;
  }
  enableGroups(tx);
  if (!row) tx.s.stmt('INSERT INTO groups (qid, id) VALUES (?, ?)').run(tx.qid, g);
  toTail(tx, g);
  tx.signalWork();
}

function backlog(tx: Tx, g: string): number {
  return (
    tx.s.stmt("SELECT COUNT(*) AS n FROM jobs WHERE qid = ? AND grp = ? AND state IN ('waiting', 'prioritized')").get(tx.qid, g) as {
      n: number;
    }
  ).n;
}

function activeOf(tx: Tx, g: string): number {
  return (tx.s.stmt("SELECT COUNT(*) AS n FROM jobs WHERE qid = ? AND grp = ? AND state = 'active'").get(tx.qid, g) as { n: number }).n;
}

/** A group with no backlog: idle, out of the ring; forgotten when nothing holds it (no setting, not running under a limit). */
function idleGroup(tx: Tx, g: string, row: GroupRow, limited: boolean): void {
  if (!hasSettings(row) && (!limited || activeOf(tx, g) === 0)) {
    tx.s.stmt('DELETE FROM groups WHERE qid = ? AND id = ?').run(tx.qid, g);
    return;
  }
  setGroup(tx, g, { st: '', q: null, turn: null, reopen: null });
}

/**
 * Refuses an add that would take a group past its backlog cap (the add's own maxSize, else the
 * group's, else the queue's), before anything is written: GroupMaxSizeExceededError.
 */
export function checkGroupCaps(tx: Tx, adds: { group: string; maxSize: number | undefined }[], defaults: GroupDefaults): void {
  const counts = new Map<string, { n: number; own: number | undefined }>();
  for (const a of adds) {
    const entry = counts.get(a.group) ?? { n: 0, own: undefined };
    entry.n++;
    if (a.maxSize !== undefined) entry.own = a.maxSize;
    counts.set(a.group, entry);
  }
  for (const [g, { n, own }] of counts) {
    const cap = own ?? groupRow(tx, g)?.ms ?? defaults.gms;
    if (cap === undefined || cap === null) continue;
    const size = backlog(tx, g);
    if (size + n > cap) throw GroupMaxSizeExceededError.of(tx.queue().name, g, cap, size);
  }
}

/** The starts a grouped claim made per rate-limited group, recorded after the claim. */
export type GroupStarts = Map<string, string[]>;

/** Puts back in the ring the groups whose rate-limit window reopened and those parked at their concurrency that have a free slot. */
function reopenGroups(tx: Tx, defaults: GroupDefaults): void {
  const reopened = tx.s
    .stmt("SELECT id FROM groups WHERE qid = ? AND st = 'l' AND reopen <= ? ORDER BY reopen, id LIMIT 100")
    .all(tx.qid, tx.now) as { id: string }[];
  for (const r of reopened) setGroup(tx, r.id, { st: 'r', turn: tx.counter(), reopen: null });
  const parked = tx.s.stmt("SELECT * FROM groups WHERE qid = ? AND st = 'c' ORDER BY turn LIMIT 100").all(tx.qid) as GroupRow[];
  for (const row of parked) {
    const conc = row.c ?? defaults.gcon;
    if (conc !== undefined && conc > 0 && activeOf(tx, row.id) >= conc) continue;
    if (backlog(tx, row.id) > 0) toTail(tx, row.id);
    else idleGroup(tx, row.id, row, true);
  }
}

/** Takes up to `room` ready jobs: of group `g`, or without a group (`g` null); waiting first, then by priority. */
function takeReady(tx: Tx, g: string | null, room: number): JobRow[] {
  if (room <= 0) return [];
  const rows = readyHead(tx, g, room);
  // Taken out of the ready jobs at once (the caller makes them active): the next read does not see them.
  for (const row of rows) tx.set(row.id, { state: 'claiming' });
  return rows;
}

/**
 * Takes up to `want` jobs round-robin over the ring of ready groups ('' is the jobs without a
 * group), weighted by deficit round-robin: a group takes up to its weight in jobs per turn. A
 * group at its concurrency or rate limit leaves the ring (parked). Records in `starts` the jobs
 * of rate-limited groups (their window is written by the caller once the jobs are claimed).
 * Weighted limits (sqlite-group-weights.ts; `qw` the queue's window, a group's own weighted
 * limiter or the default one): jobs are taken one by one while they fit, their weights noted in
 * `weights`. A group whose head job does not fit its window is parked until it fits; a job that
 * fits its group but not the queue stops the walk (`blocked`: its cost), its group keeping the
 * head of the ring and what is left of its turn.
 */
export function takeGrouped(
  tx: Tx,
  want: number,
  limits: QueueLimits & GroupDefaults,
  starts: Map<string, number>,
  qw: Window | undefined,
  weights: Weights,
): { rows: JobRow[]; blocked?: number } {
  reopenGroups(tx, limits);
  const ids: JobRow[] = [];
  // Weighted group windows read by this call (a group may get a second turn in the same claim).
  const gwin = new Map<string, GroupWindow>();
  let blocked: number | undefined;
  const taken = new Map<string, number>();
  const defaultWeight = limits.gwt ?? 1;
  let ringSize = (tx.s.stmt("SELECT COUNT(*) AS n FROM groups WHERE qid = ? AND st = 'r'").get(tx.qid) as { n: number }).n;
  let ungroupedEmpty = false;
  let dry = 0;
  for (let guard = 0; ids.length < want && ringSize > 0 && blocked === undefined && guard < 10_000; guard++) {
    const row = tx.s.stmt("SELECT * FROM groups WHERE qid = ? AND st = 'r' ORDER BY turn LIMIT 1").get(tx.qid) as GroupRow | undefined;
    if (!row) break;
    const alone = ringSize === 1 || (ringSize === 2 && ungroupedEmpty);
    const before = ids.length;
    let room = want - ids.length;
    if (row.id === '') {
      let quantum = defaultWeight;
      if (!alone) {
        if (defaultWeight > 1) quantum = row.q ?? defaultWeight;
        room = Math.min(room, quantum);
      }
      const fitted = qw ? takeFitting(tx, null, room, undefined, qw, weights) : undefined;
      const got = fitted ? fitted.rows : takeReady(tx, null, room);
      ids.push(...got);
      ungroupedEmpty = got.length === 0 && fitted?.stop === undefined;
      if (fitted?.stop !== undefined) {
        // The queue's weighted window is full for the head job: it keeps the head of the ring.
        blocked = fitted.cost;
        if (defaultWeight > 1 && !alone && got.length > 0) setGroup(tx, '', { q: quantum - got.length });
      } else if (defaultWeight > 1 && !alone && got.length > 0 && got.length < quantum && ids.length >= want) {
        setGroup(tx, '', { q: quantum - got.length });
      } else {
        setGroup(tx, '', { q: null, turn: tx.counter() });
      }
    } else {
      const g = row.id;
      const conc = row.c ?? limits.gcon;
      const counts = conc !== undefined && conc > 0;
      const lm = row.lm ?? limits.glm;
      const ld = row.lm !== null ? (row.ld ?? 0) : (limits.gld ?? 0);
      const weight = row.w ?? defaultWeight;
      let quantum = row.q ?? weight;
      if (!alone) room = Math.min(room, quantum);
      let active = counts ? activeOf(tx, g) : 0;
      let park: 'c' | 'l' | undefined;
      let reopen = 0;
      if (counts) {
        if (active >= conc) park = 'c';
        else room = Math.min(room, conc - active);
      }
      let windowed = false;
      const wl = lm !== undefined && lm > 0 ? weightedLimitOf(row, limits) : undefined;
      let gw: GroupWindow | undefined;
      if (!park && wl) {
        // A weighted window: judged job by job below.
        gw = gwin.get(g) ?? groupWindow(tx, g, wl.max, wl.duration);
        gwin.set(g, gw);
      } else if (!park && lm !== undefined && lm > 0) {
        windowed = true;
        tx.s.stmt('DELETE FROM group_window WHERE qid = ? AND grp = ? AND at <= ?').run(tx.qid, g, tx.now - ld);
        const w = tx.s.stmt('SELECT COUNT(*) AS n, MIN(at) AS first FROM group_window WHERE qid = ? AND grp = ?').get(tx.qid, g) as {
          n: number;
          first: number | null;
        };
        const used = w.n + (taken.get(g) ?? 0);
        if (used >= lm) {
          park = 'l';
          // An empty window here means this call's own starts filled it: they began now.
          reopen = (w.first ?? tx.now) + ld;
        } else room = Math.min(room, lm - used);
      }
      if (park === 'c') {
        setGroup(tx, g, { st: 'c', q: weight, turn: null });
        ringSize--;
      } else if (park === 'l') {
        setGroup(tx, g, { st: 'l', reopen, turn: null });
        ringSize--;
      } else {
        const fitted = gw || qw ? takeFitting(tx, g, room, gw, qw, weights) : undefined;
        const got = fitted ? fitted.rows : takeReady(tx, g, room);
        ids.push(...got);
        const n = got.length;
        if (windowed && n > 0) {
          taken.set(g, (taken.get(g) ?? 0) + n);
          starts.set(g, ld);
        }
        active += n;
        quantum -= n;
        if (fitted?.stop === 'g' && gw) {
          // Its head job does not fit its window: parked until it does; the other groups go on.
          setGroup(tx, g, { st: 'l', reopen: tx.now + groupRoomIn(tx, gw, fitted.cost ?? 0), turn: null });
          ringSize--;
        } else if (fitted?.stop === 'q') {
          // It fits its group but not the queue's window: the walk stops, and the group keeps the
          // head of the ring with what is left of its turn.
          blocked = fitted.cost;
          setGroup(tx, g, { q: quantum === weight ? null : quantum });
        } else if (n < room) {
          idleGroup(tx, g, row, counts);
          ringSize--;
        } else if (counts && active >= conc) {
          setGroup(tx, g, { st: 'c', q: weight, turn: null });
          ringSize--;
        } else {
          // Mid-turn (the claim is full): it keeps the head of the ring; else the tail, with a new turn.
          const midTurn = quantum > 0 && ids.length >= want;
          const q = midTurn ? quantum : weight;
          if (midTurn) setGroup(tx, g, { q: q === weight ? null : q });
          else setGroup(tx, g, { q: q === weight ? null : q, turn: tx.counter() });
        }
      }
    }
    // A member that left the ring is not counted: the walk ends after a whole turn of the
    // members still in it without a job (nothing is ready).
    const stays =
      (tx.s.stmt('SELECT st FROM groups WHERE qid = ? AND id = ?').get(tx.qid, row.id) as { st: string } | undefined)?.st === 'r';
    if (ids.length > before) dry = 0;
    else if (stays) dry++;
    if (dry > 0 && dry >= ringSize) break;
  }
  sweepIdleGroups(tx);
  return { rows: ids, blocked };
}

/** Forgets a couple of idle groups left with nothing to keep them (no setting, no job running). */
function sweepIdleGroups(tx: Tx): void {
  tx.s
    .stmt(
      `DELETE FROM groups WHERE rowid IN (SELECT g.rowid FROM groups g WHERE g.qid = ? AND g.st = '' AND g.id != ''
         AND g.c IS NULL AND g.lm IS NULL AND g.ms IS NULL AND g.w IS NULL
         AND NOT EXISTS (SELECT 1 FROM jobs j WHERE j.qid = g.qid AND j.grp = g.id AND j.state IN ('active', 'waiting', 'prioritized'))
         LIMIT 2)`,
    )
    .run(tx.qid);
}

/** Records the starts of grouped jobs in their groups' windows. */
export function recordGroupStarts(
  tx: Tx,
  jobs: { id: string; grp: string | null; started: number }[],
  windowed: Map<string, number>,
): void {
  for (const j of jobs) {
    if (j.grp === null || !windowed.has(j.grp)) continue;
    tx.s.stmt('INSERT INTO group_window (qid, grp, at, member) VALUES (?, ?, ?, ?)').run(tx.qid, j.grp, tx.now, `${j.id}:${j.started}`);
  }
}

/** When the first group parked by its rate limit reopens (a worker's wake-up), or null. */
export function nextReopen(tx: Tx): number | null {
  return (tx.s.stmt("SELECT MIN(reopen) AS at FROM groups WHERE qid = ? AND st = 'l'").get(tx.qid) as { at: number | null }).at;
}

/**
 * Jobs left active (completed, failed, retried): a group parked at its concurrency that now has
 * a free slot goes back to the ring (waking idle workers) or, with no backlog, becomes idle.
 */
export function releaseSlots(tx: Tx, rows: (JobRow | undefined)[]): void {
  let gcon: number | undefined | null = null;
  const seen = new Set<string>();
  for (const row of rows) {
    if (!row || row.grp === null || seen.has(row.grp)) continue;
    seen.add(row.grp);
    const group = groupRow(tx, row.grp);
    if (!group || group.st !== 'c') continue;
    if (gcon === null) gcon = readLimits(tx.s, tx.qid).gcon;
    const conc = group.c ?? gcon;
    if (conc !== undefined && conc > 0 && activeOf(tx, row.grp) >= conc) continue;
    requeue(tx, row.grp);
  }
}

/** Puts a group back in the ring if it has a backlog, else makes it idle (configureGroup.lua requeue + settle). */
function requeue(tx: Tx, g: string): void {
  if (backlog(tx, g) > 0) {
    enableGroups(tx);
    toTail(tx, g);
    tx.signalWork();
    return;
  }
  const row = groupRow(tx, g);
  if (row) idleGroup(tx, g, row, true);
}

/**
 * Changes one group (configureGroup.lua): 'set' writes its settings (c, lm/ld/lwt, ms, w; ''
 * removes), 'pause'/'resume'. Returns whether it changed anything (false: already so). A field it does not know is
 * refused before anything is written.
 */
export function configureGroup(tx: Tx, g: string, op: 'set' | 'pause' | 'resume', fields: Record<string, string>): boolean {
  const unknown = Object.keys(fields).filter((f) => !GROUP_FIELDS.has(f));
  if (unknown.length > 0) throw new InvalidOptionsError(`Unknown group settings ${unknown.join(', ')}: nothing was changed.`);
  const row = groupRow(tx, g);
  const status = row?.st ?? '';
  if (op === 'pause') {
    if (status === 'p') return false;
    if (!row) tx.s.stmt('INSERT INTO groups (qid, id) VALUES (?, ?)').run(tx.qid, g);
    setGroup(tx, g, { st: 'p', turn: null, reopen: null });
    return true;
  }
  if (op === 'resume') {
    if (status !== 'p') return false;
    requeue(tx, g);
    return true;
  }
  const set = Object.entries(fields).filter(([, v]) => v !== '');
  if (!row && set.length === 0) return true;
  if (!row) tx.s.stmt("INSERT INTO groups (qid, id, st) VALUES (?, ?, '')").run(tx.qid, g);
  setGroup(tx, g, Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, v === '' ? null : Number(v)])));
  if (status === 'c' || status === 'l' || status === 'r') requeue(tx, g);
  else if (status === '') {
    const now = groupRow(tx, g);
    if (now && backlog(tx, g) === 0) idleGroup(tx, g, now, true);
  }
  return true;
}

/** After the queue's group defaults changed: groups parked under them are judged again at the next claim. */
export function requeueParked(tx: Tx, changed: Set<string>): void {
  if (!groupsOn(tx)) return;
  const states: string[] = [];
  if (changed.has('gcon')) states.push('c');
  if (changed.has('glm') || changed.has('gld') || changed.has('glw')) states.push('l');
  for (const st of states) {
    const rows = tx.s.stmt('SELECT id FROM groups WHERE qid = ? AND st = ? LIMIT 1000').all(tx.qid, st) as { id: string }[];
    for (const r of rows) if (backlog(tx, r.id) > 0) toTail(tx, r.id);
  }
}
