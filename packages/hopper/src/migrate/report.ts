/**
 * What a migration reports: per-state counts moved, what stayed and why, the counts read back from
 * both sides, and the one-line summary the CLI ends with.
 */
import type { QueueConnection } from '../backend/create.js';
import type { HopperOnlyFeature } from './export-jobs.js';

/** The states a migration counts, BullMQ's names. */
export const MIGRATED_STATES = ['waiting', 'prioritized', 'delayed', 'waiting-children', 'failed', 'completed'] as const;
export type MigratedState = (typeof MIGRATED_STATES)[number];

/** Counts per state, as read from one side. */
export type StateTally = Record<MigratedState | 'active', number>;

/** Why jobs stayed where they were. */
export interface LeftBehind {
  /** Active jobs a BullMQ worker still holds (their lock is alive): moved once released. */
  held: number;
  /** Children whose parent is still in BullMQ (another queue, or not yet moved): moved after it. */
  waitingForParent: number;
  /** Jobs Hopper refused (see `refusals`): left where they were. */
  refused: number;
  /** Completed jobs (history), without `withHistory`. */
  history: number;
}

/** One job or scheduler that cannot move, and why. */
export interface Refusal {
  id: string;
  state: string;
  why: string;
}

/** The outcome of a migration run (or of a dry run: what it would do). */
export interface MigrationReport {
  direction: 'to-hopper' | 'to-bullmq';
  dryRun: boolean;
  /** The BullMQ layout found (5 or 6) and the version recorded in the queue's meta. */
  layout: { version: 5 | 6; recorded: string | undefined };
  /** Jobs moved, per state they entered (a dry run: would move). */
  moved: Record<MigratedState, number>;
  /** Job schedulers and legacy repeatable jobs moved. */
  schedulers: number;
  /** Found on both sides after an interrupted run: the destination's copy was kept, the source's removed. */
  alreadyThere: number;
  /**
   * Going to Hopper: deduplication ids with a ttl carried over apart from their job (it finished
   * in BullMQ, or still runs there), and leases of moved jobs' ids ended (docs/migrating.md).
   */
  deduplication?: { carried: number; leasesEnded: number };
  left: LeftBehind;
  /** Jobs and schedulers that cannot move, and why (at most 100 listed; `refusedCount` counts all). */
  refusals: Refusal[];
  refusedCount: number;
  /** Notes: logs cut to the newest lines, deduplication ids held by another job, parents not found. */
  notes: string[];
  /**
   * The way back only: Hopper-only state found (per kind: jobs, schedulers or settings carrying
   * it) and, with `dropHopperOnly`, what was dropped. Absent going to Hopper.
   */
  hopperOnly?: { found: Partial<Record<HopperOnlyFeature, number>>; dropped: Partial<Record<HopperOnlyFeature, number>> };
  /** Counts per state read from the source before and after, and from the destination after. */
  counts: { sourceBefore: StateTally; sourceAfter: StateTally; destinationAfter: StateTally };
  /**
   * Whether the counts read back match what the run accounts for: every job the source still
   * holds in a movable state is one the run left on purpose (held, waiting for its parent, refused,
   * history). False when something was added after the last pass, or on a mismatch.
   */
  countsMatch: boolean;
  /** Jobs taken from the source and found on neither side: always 0 unless something is wrong. */
  lost: number;
  /** How the run ended: done, stopped (signal), quiet (follow: quiet period reached). */
  ended: 'done' | 'stopped' | 'quiet';
  durationMs: number;
}

/** Progress a migration reports while it runs. */
export type MigrationProgress =
  | { kind: 'layout'; version: 5 | 6; recorded: string | undefined; paused: boolean }
  | { kind: 'moved'; state: MigratedState; count: number; total: number }
  | { kind: 'scheduler'; id: string; outcome: 'moved' | 'exists' }
  | { kind: 'waiting'; held: number; waitingForParent: number }
  | { kind: 'refused'; id: string; state: string; why: string };

/**
 * Options of {@link migrateFromBullMQ} and {@link migrateToBullMQ}. `from` is the side jobs
 * leave and `to` the side they enter: BullMQ then Hopper going to Hopper, Hopper then BullMQ
 * on the way back. `prefix` is always BullMQ's and `hopperPrefix` always Hopper's.
 */
export interface MigrateOptions {
  /** The source's Redis (BullMQ's; Hopper's on the way back): an ioredis client, options or a `redis://` URL. */
  from: QueueConnection;
  /** The queue's name (the same on both sides). */
  queue: string;
  /** BullMQ's key prefix. Default `bull`. */
  prefix?: string;
  /** The target's Redis (Hopper's; BullMQ's on the way back). Default: `from`. */
  to?: QueueConnection;
  /** Hopper's key prefix. Default `hopper`. */
  hopperPrefix?: string;
  /** Reads and reports what would move (and what cannot, and why); writes nothing. */
  dryRun?: boolean;
  /**
   * Bridge mode: keeps moving the jobs BullMQ producers still add (woken by BullMQ's events
   * stream, each add moved within about 100 ms) until `signal` aborts or `quietForMs` passes
   * with nothing to move.
   */
  follow?: boolean;
  /** With `follow`: stop after this many ms with nothing added or left to move. Default: until stopped. */
  quietForMs?: number;
  /** Also moves completed jobs (history). Default false. */
  withHistory?: boolean;
  /**
   * Way back only: move jobs and schedulers that carry Hopper-only state (groups, steps,
   * dead-letter routes, budgets, runs, timeouts, flows, scheduler policies, queue settings)
   * without it, instead of refusing. The report's `hopperOnly.dropped` says what was dropped.
   */
  dropHopperOnly?: boolean;
  /**
   * Way back only: the BullMQ version whose layout to write (`6`, `5`, or `x.y.z`, recorded in a
   * new queue's meta) when the BullMQ queue does not exist yet; an existing queue's meta decides
   * otherwise. Default `6.7.0`.
   */
  bullmqVersion?: string;
  /** Stops the run after the batch in hand (the report says `stopped`); a re-run resumes. */
  signal?: AbortSignal;
  onProgress?: (event: MigrationProgress) => void;
  /** The migration lock's time to live, ms (renewed every third of it). Default 10,000. */
  lockTtlMs?: number;
  /** Jobs per batch (each batch: one take, one read, one Hopper write, one delete). Default 200. */
  batchSize?: number;
}

/** An empty tally. */
export function emptyTally(): StateTally {
  return { waiting: 0, prioritized: 0, delayed: 0, 'waiting-children': 0, failed: 0, completed: 0, active: 0 };
}

/** The CLI's last line: `migrated <n> jobs (<per state>), <s> schedulers; lost 0` (or what went wrong). */
export function summaryLine(r: MigrationReport): string {
  const total = MIGRATED_STATES.reduce((sum, s) => sum + r.moved[s], 0);
  const per = MIGRATED_STATES.filter((s) => r.moved[s] > 0)
    .map((s) => `${r.moved[s]} ${s}`)
    .join(', ');
  const verb = r.dryRun ? 'would migrate' : 'migrated';
  const line = `${verb} ${total} jobs (${per || 'none'}), ${r.schedulers} schedulers; lost ${r.lost}`;
  const left = r.left.held + r.left.waitingForParent + r.left.refused;
  const extra: string[] = [];
  if (left > 0) extra.push(`${left} left in the source (${describeLeft(r.left)})`);
  if (!r.countsMatch && !r.dryRun) extra.push('counts read back do not match: run again');
  return extra.length > 0 ? `${line}; ${extra.join('; ')}` : line;
}

function describeLeft(l: LeftBehind): string {
  const parts: string[] = [];
  if (l.held > 0) parts.push(`${l.held} active, held by workers`);
  if (l.waitingForParent > 0) parts.push(`${l.waitingForParent} waiting for their parent`);
  if (l.refused > 0) parts.push(`${l.refused} refused`);
  return parts.join(', ');
}

/** Whether a report means every job found is accounted for, moved (exit code 0 for the CLI). */
export function isComplete(r: MigrationReport): boolean {
  return r.lost === 0 && r.countsMatch && r.left.held + r.left.waitingForParent + r.left.refused === 0;
}
