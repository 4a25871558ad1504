/**
 * Job schedulers on SQLite: the counterpart of upsertScheduler, advanceScheduler,
 * pauseScheduler, removeScheduler and runScheduled.lua and of the includes scheduler, pending
 * and occurrence, whose contracts they follow (read those headers for the why). The next
 * occurrences are planned in TypeScript by the same code as on Redis (src/schedule, called by
 * maintenance/scheduler-tick.ts); these functions only store them, guarded by the scheduler's
 * last instant.
 *
 * A scheduler is a row of `schedulers` (columns named as the Redis hash fields); `score` is its
 * place in the Redis `schedulers` sorted set (the pending occurrence's due time, or the hold's
 * end; NULL for +inf) and `due_at` its place in `sched-due` (NULL: not due). An occurrence is a
 * job whose `sched_id` names its scheduler and `sched_instant` holds its instant; it is pending
 * while it has never started (a retry of it is an ordinary job).
 */
import type { AdvanceSchedulerResult, OccurrencePlan, SchedulerPauseResult, SchedulerUpsertResult, SchedulerWrite } from '../backend.js';
import type { JobRow, Tx } from './sqlite-ops.js';
import { groupOfOpts } from './sqlite-groups.js';
import { occurrenceId, triggeredOccurrenceId } from '../../schedule/occurrence-id.js';

/** Most fired instants a scheduler remembers (backfill never repeats one of them). */
const FIRED_RECORD_MAX = 1000;

/** A scheduler row as stored. */
export interface SchedulerRow {
  id: string;
  hash: string;
  spec: string;
  tpl: string;
  ov: string;
  cu: string;
  cw: number;
  lim: number;
  paused: number;
  last: string;
  after: number | null;
  pid: string;
  run: string;
  buf: string;
  inst: string;
  due: number | null;
  prev: string;
  hold: string;
  fired: number;
  skipped: number;
  missed: number;
  created: number;
  created_at: number;
  score: number | null;
  due_at: number | null;
}

/** A scheduler's job template, decoded (see SchedulerWrite.template). */
interface Template {
  name: string;
  data: string;
  opts: string;
  priority: number;
  rep: string | undefined;
  countBase: number;
}

function decodeTemplate(raw: string): Template {
  const t = JSON.parse(raw) as { name: string; data: string; opts?: string; priority?: unknown; rep?: unknown; cb?: unknown };
  return {
    name: t.name,
    data: t.data,
    opts: t.opts ?? '',
    priority: Number(t.priority) || 0,
    rep: typeof t.rep === 'string' && t.rep.startsWith('{') ? t.rep : undefined,
    countBase: Number(t.cb) || 0,
  };
}

function schedulerRow(tx: Tx, id: string): SchedulerRow | undefined {
  return tx.s.stmt('SELECT * FROM schedulers WHERE qid = ? AND id = ?').get(tx.qid, id) as SchedulerRow | undefined;
}

function setScheduler(tx: Tx, id: string, fields: Record<string, string | number | null>): void {
  const names = Object.keys(fields);
  const sql = `UPDATE schedulers SET ${names.map((n) => `${n} = ?`).join(', ')} WHERE qid = ? AND id = ?`;
  tx.s.stmt(sql).run(...names.map((n) => fields[n]), tx.qid, id);
}

/** Whether a job never started (it is then still a scheduler's occurrence, not an ordinary job). */
function neverStarted(row: JobRow): boolean {
  return row.attempts_started === 0 && row.processed_on === null;
}

const NOT_STARTED = new Set(['delayed', 'waiting', 'prioritized']);

/** Whether occurrence `id` is still waiting for its time (delayed, never started). */
function isWaitingOccurrence(tx: Tx, id: string): boolean {
  if (id === '') return false;
  const row = tx.job(id);
  return row !== undefined && row.state === 'delayed' && neverStarted(row);
}

/** The id of the scheduler whose pending run job `row` is, or undefined (includes/pending). */
export function pendingRunOf(tx: Tx, row: JobRow): string | undefined {
  if (row.sched_id === null || !NOT_STARTED.has(row.state) || !neverStarted(row)) return undefined;
  const sched = tx.s.stmt('SELECT pid FROM schedulers WHERE qid = ? AND id = ?').get(tx.qid, row.sched_id) as { pid: string } | undefined;
  return sched?.pid === row.id ? row.sched_id : undefined;
}

/** A SQL condition true for a job of table `jobs` that is not a scheduler's pending run (drain and clean skip those). */
export const NOT_PENDING_RUN = `NOT (jobs.sched_id IS NOT NULL AND jobs.attempts_started = 0 AND jobs.processed_on IS NULL
  AND EXISTS (SELECT 1 FROM schedulers s WHERE s.qid = jobs.qid AND s.id = jobs.sched_id AND s.pid = jobs.id))`;

/**
 * Takes occurrence `id` away if it never started and deletes it; a ready one had been counted
 * as fired, which is undone. A ready one stays while the queue is paused. Returns whether it
 * was withdrawn.
 */
function withdrawPending(tx: Tx, id: string): boolean {
  if (id === '') return false;
  const row = tx.job(id);
  if (!row || !NOT_STARTED.has(row.state) || !neverStarted(row)) return false;
  const paused = tx.settings().paused;
  if (row.state !== 'delayed' && paused) return false;
  if (row.state !== 'delayed' && row.sched_id !== null) {
    const sched = schedulerRow(tx, row.sched_id);
    if (sched) {
      setScheduler(tx, sched.id, {
        run: sched.run === id ? '' : sched.run,
        buf: sched.buf === id ? '' : sched.buf,
        fired: sched.fired - 1,
      });
    }
    if (row.sched_instant !== null)
      tx.s.stmt('DELETE FROM scheduler_fired WHERE qid = ? AND sched_id = ? AND instant = ?').run(tx.qid, row.sched_id, row.sched_instant);
  }
  tx.deleteJob(id);
  tx.emit('removed', { jobId: id, prev: row.state });
  return true;
}

/** The pending run is withdrawn: the schedule resumes from the instant before it. */
function withdrawAndRewind(tx: Tx, sched: SchedulerRow): void {
  if (withdrawPending(tx, sched.pid)) setScheduler(tx, sched.id, { last: sched.prev });
}

/** Creates or updates a scheduler (upsertScheduler.lua). */
export function upsertScheduler(tx: Tx, w: SchedulerWrite): SchedulerUpsertResult {
  const current = schedulerRow(tx, w.id);
  if (current?.hash === w.hash) return 'unchanged';
  // A migrated scheduler (seed) never replaces one already here.
  if (current && w.seed) return 'unchanged';
  if (current) withdrawAndRewind(tx, current);
  else {
    tx.s.stmt('INSERT INTO schedulers (qid, id, created_at) VALUES (?, ?, ?)').run(tx.qid, w.id, tx.now);
  }
  setScheduler(tx, w.id, {
    hash: w.hash,
    spec: w.spec,
    tpl: w.template,
    ov: w.overlap,
    cu: w.catchup,
    cw: w.catchupWindow,
    lim: w.limit,
    pid: '',
    hold: '',
    paused: w.paused ? 1 : 0,
    due_at: tx.now,
    ...(w.seed ? { last: String(w.seed.last), created: w.seed.created } : {}),
  });
  tx.emit('scheduler-upserted', { schedulerId: w.id });
  return current ? 'replaced' : 'created';
}

/** The options JSON of one occurrence: the template's, with the schedule's fields in front (includes/occurrence). */
function occurrenceOpts(tpl: Template, schedId: string, instant: number, count: number | undefined, delay: number): string {
  if (tpl.rep === undefined) return tpl.opts;
  let rep = tpl.rep;
  if (count !== undefined) rep = rep === '{}' ? `{"count":${count}}` : `${rep.slice(0, -1)},"count":${count}}`;
  const head = `{"repeat":${rep},"prevMillis":${instant},"repeatJobKey":${JSON.stringify(schedId)},"delay":${delay}`;
  if (tpl.opts === '' || tpl.opts === '{}') return `${head}}`;
  return `${head},${tpl.opts.slice(1)}`;
}

/** Creates occurrence `id` for `instant`, delayed until `due` (or ready now); returns the state it entered. */
function createOccurrence(
  tx: Tx,
  id: string,
  schedId: string,
  instant: number,
  due: number,
  tpl: Template,
  ready: boolean,
  count: number | undefined,
): string {
  const delay = ready ? 0 : Math.max(due - tx.now, 0);
  tx.s
    .stmt(
      `INSERT INTO jobs (qid, id, name, data, opts, state, ts, priority, delay, sched_id, sched_instant, grp)
       VALUES (?, ?, ?, ?, ?, 'waiting', ?, ?, ?, ?, ?, ?)`,
    )
    .run(
      tx.qid,
      id,
      tpl.name,
      tpl.data,
      occurrenceOpts(tpl, schedId, instant, count, delay),
      tx.now,
      tpl.priority,
      delay,
      schedId,
      instant,
      groupOfOpts(tpl.opts)?.id ?? null,
    );
  if (ready) {
    const state = tx.pushReady(id, tpl.priority, false);
    tx.signalWork();
    return state;
  }
  tx.pushDelayed(id, due);
  return 'delayed';
}

/** Whether job `id` exists and is not finished. */
function isLive(tx: Tx, id: string): boolean {
  if (id === '') return false;
  const row = tx.s.stmt('SELECT state FROM jobs WHERE qid = ? AND id = ?').get(tx.qid, id) as { state: string } | undefined;
  return row !== undefined && row.state !== 'completed' && row.state !== 'failed';
}

/**
 * A scheduler's occurrence fell due (includes/scheduler): missed, skipped by its overlap
 * policy (deleted), or made ready. The job has left the delayed jobs already. Returns whether it
 * was made ready.
 */
export function fireOccurrence(tx: Tx, row: JobRow, due: number): boolean {
  const schedId = row.sched_id as string;
  const sched = schedulerRow(tx, schedId);
  if (!sched) {
    // The scheduler is gone (removed between the occurrence's creation and now): drop it.
    tx.deleteJob(row.id);
    return false;
  }
  setScheduler(tx, schedId, { due_at: tx.now });
  const instant = row.sched_instant ?? tx.now;
  let reason: 'missed' | 'skipped' | undefined;
  if (row.id === sched.pid) {
    if (tx.now - due > sched.cw) reason = 'missed';
    else if (sched.cu !== 'all' && sched.after !== null && sched.after <= tx.now) reason = 'missed';
  }
  if (!reason) {
    const running = isLive(tx, sched.run);
    if (running && sched.ov === 'skip') reason = 'skipped';
    else if (running && sched.ov === 'bufferOne' && isLive(tx, sched.buf)) reason = 'skipped';
  }
  if (reason) {
    setScheduler(tx, schedId, { [reason]: sched[reason] + 1 });
    tx.deleteJob(row.id);
    tx.emit(`scheduler-${reason}`, { schedulerId: schedId, jobId: row.id });
    return false;
  }
  if (sched.ov === 'bufferOne' && isLive(tx, sched.run)) setScheduler(tx, schedId, { buf: row.id, fired: sched.fired + 1 });
  else setScheduler(tx, schedId, { run: row.id, buf: '', fired: sched.fired + 1 });
  recordFired(tx, schedId, instant);
  const state = tx.pushReady(row.id, row.priority, false, row.grp);
  tx.emit('waiting', { jobId: row.id, prev: 'delayed', state });
  return true;
}

function recordFired(tx: Tx, schedId: string, instant: number): void {
  tx.s.stmt('INSERT OR IGNORE INTO scheduler_fired (qid, sched_id, instant) VALUES (?, ?, ?)').run(tx.qid, schedId, instant);
  const { n } = tx.s.stmt('SELECT COUNT(*) AS n FROM scheduler_fired WHERE qid = ? AND sched_id = ?').get(tx.qid, schedId) as { n: number };
  if (n > FIRED_RECORD_MAX) {
    tx.s
      .stmt(
        'DELETE FROM scheduler_fired WHERE qid = ? AND sched_id = ? AND instant = (SELECT MIN(instant) FROM scheduler_fired WHERE qid = ? AND sched_id = ?)',
      )
      .run(tx.qid, schedId, tx.qid, schedId);
  }
}

/**
 * Creates a scheduler's next occurrences if its last instant is still `expectedLast`
 * (advanceScheduler.lua; see AdvanceSchedulerResult).
 */
export function advanceScheduler(
  tx: Tx,
  schedId: string,
  expectedLast: string,
  occurrences: OccurrencePlan[],
  after: number | null,
  missed: number,
): AdvanceSchedulerResult {
  const sched = schedulerRow(tx, schedId);
  if (!sched) return { kind: 'missing' };
  if (sched.paused === 1) {
    setScheduler(tx, schedId, { due_at: null });
    return { kind: 'advanced', created: 0, again: false };
  }
  if (sched.last !== expectedLast) return { kind: 'raced' };
  if (isWaitingOccurrence(tx, sched.pid)) {
    setScheduler(tx, schedId, { due_at: null });
    return { kind: 'advanced', created: 0, again: false };
  }
  const pendingRow = sched.pid === '' ? undefined : tx.job(sched.pid);
  if (sched.hold !== '' && pendingRow && pendingRunOf(tx, pendingRow)) {
    const holdUntil = sched.hold === '+inf' ? Infinity : Number(sched.hold);
    if (tx.now < holdUntil) {
      setScheduler(tx, schedId, { due_at: sched.hold === '+inf' ? null : holdUntil });
      return { kind: 'advanced', created: 0, again: false };
    }
  }
  const tpl = decodeTemplate(sched.tpl);
  let last = sched.last === '' ? -1 : Number(sched.last);
  let created = 0;
  const ids: string[] = [];
  const names: string[] = [];
  const states: string[] = [];
  const dues: number[] = [];
  let pendingId = '';
  let pendingDue: number | null = null;
  let pendingInstant = '';
  const dueNow: { id: string; due: number }[] = [];
  let pendingDueNow = false;
  let pendingExisted = false;
  let prev = sched.last;
  for (const o of occurrences) {
    if (o.instant <= last) continue;
    const id = occurrenceId(schedId, o.instant);
    const made = !tx.exists(id);
    if (made) {
      created++;
      // The iteration number BullMQ puts in opts.repeat.count: occurrences created so far, from 1.
      const count = tpl.countBase + sched.created + created;
      const state = createOccurrence(tx, id, schedId, o.instant, o.due, tpl, false, count);
      ids.push(id);
      names.push(tpl.name);
      states.push(state);
      dues.push(o.due);
      if (o.due <= tx.now) {
        dueNow.push({ id, due: o.due });
        if (o.pending) pendingDueNow = true;
      }
    }
    if (o.pending && made) {
      prev = last >= 0 ? String(last) : '';
      pendingId = id;
      pendingDue = o.due;
      pendingInstant = String(o.instant);
    } else if (o.pending) {
      pendingExisted = true;
    }
    last = o.instant;
  }
  setScheduler(tx, schedId, {
    pid: pendingId,
    inst: pendingInstant,
    due: pendingDue,
    after,
    prev,
    hold: '',
    score: pendingDue,
    created: sched.created + created,
    missed: sched.missed + Math.max(missed, 0),
    ...(last >= 0 ? { last: String(last) } : {}),
  });
  if (ids.length > 0) {
    tx.emit('added', {
      ids: JSON.stringify(ids),
      names: JSON.stringify(names),
      states: JSON.stringify(states),
      delays: JSON.stringify(dues),
    });
  }
  let pendingKept = false;
  for (const d of dueNow) {
    const row = tx.job(d.id);
    if (!row) continue;
    const kept = fireOccurrence(tx, row, d.due);
    if (d.id === pendingId) pendingKept = kept;
  }
  if (dueNow.length > 0) tx.signalWork();
  if (pendingDueNow && pendingKept) {
    // Held until a worker takes it, or until the fire after it is due.
    setScheduler(tx, schedId, { hold: after !== null ? String(after) : '+inf', score: after, due_at: after });
  } else if (pendingDueNow || pendingExisted) {
    setScheduler(tx, schedId, { pid: '', due_at: tx.now });
    return { kind: 'advanced', created, again: true };
  } else {
    setScheduler(tx, schedId, { due_at: null });
  }
  return { kind: 'advanced', created, again: false };
}

/** Pauses or resumes a scheduler (pauseScheduler.lua). */
export function pauseScheduler(tx: Tx, id: string, paused: boolean): SchedulerPauseResult {
  const sched = schedulerRow(tx, id);
  if (!sched) return 'missing';
  if ((sched.paused === 1) === paused) return 'unchanged';
  if (paused) {
    withdrawAndRewind(tx, sched);
    setScheduler(tx, id, { paused: 1, pid: '', hold: '', score: null });
    tx.emit('scheduler-paused', { schedulerId: id });
  } else {
    setScheduler(tx, id, { paused: 0, due_at: tx.now });
    tx.emit('scheduler-resumed', { schedulerId: id });
  }
  return 'changed';
}

/** Deletes a scheduler and its pending run if it never started (removeScheduler.lua). */
export function removeScheduler(tx: Tx, id: string): boolean {
  const sched = schedulerRow(tx, id);
  if (!sched) return false;
  withdrawPending(tx, sched.pid);
  tx.s.stmt('DELETE FROM schedulers WHERE qid = ? AND id = ?').run(tx.qid, id);
  tx.s.stmt('DELETE FROM scheduler_fired WHERE qid = ? AND sched_id = ?').run(tx.qid, id);
  tx.emit('scheduler-removed', { schedulerId: id });
  return true;
}

/** Makes occurrences ready now, outside the schedule (runScheduled.lua); undefined when there is no such scheduler. */
export function runScheduled(tx: Tx, schedId: string, trigger: boolean, instants: number[]): string[] | undefined {
  const sched = schedulerRow(tx, schedId);
  if (!sched) return undefined;
  const tpl = decodeTemplate(sched.tpl);
  const out: string[] = [];
  const states: string[] = [];
  let fired = sched.fired;
  let run = sched.run;
  for (const instant of trigger ? [tx.now] : instants) {
    const id = trigger ? triggeredOccurrenceId(schedId, instant) : occurrenceId(schedId, instant);
    const firedBefore =
      !trigger &&
      tx.s.stmt('SELECT 1 FROM scheduler_fired WHERE qid = ? AND sched_id = ? AND instant = ?').get(tx.qid, schedId, instant) !== undefined;
    if (tx.exists(id) || firedBefore) continue;
    states.push(createOccurrence(tx, id, schedId, instant, tx.now, tpl, true, undefined));
    if (!trigger) recordFired(tx, schedId, instant);
    run = id;
    fired++;
    out.push(id);
  }
  setScheduler(tx, schedId, { run, fired });
  if (out.length > 0) {
    tx.emit('added', {
      ids: JSON.stringify(out),
      names: JSON.stringify(out.map(() => tpl.name)),
      states: JSON.stringify(states),
      delays: JSON.stringify(out.map(() => 0)),
    });
  }
  return out;
}
