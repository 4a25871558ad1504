/**
 * Moves batches of jobs from BullMQ to Hopper, exactly once: take (BullMQ's structure -> the
 * migration's moving set), read, write to Hopper (importJobs: a job already there is kept), then
 * delete from BullMQ (finish). Also carries the outcomes of children still in BullMQ over to
 * their parents already in Hopper.
 */
import type { QueueBackend } from '../backend/backend.js';
import type { ExternalChildOutcome, ImportedJob } from '../backend/import-records.js';
import type { RedisClient } from '../backend/redis/connection.js';
import { parseJobKey } from '../job/job-key.js';
import type { BullKeys } from './bullmq-keys.js';
import { parseBullJobKey } from './bullmq-keys.js';
import { translateJob, weightOf, type MovingInfo, type RawJob, type TranslateContext } from './bullmq-jobs.js';
import { DEDUP_LEASE_MS } from './bullmq-dedup.js';
import { FINISH, GIVE_BACK, READ_JOBS, runBullScript, SETTLE_PARENT, TAKE } from './bullmq-scripts.js';
import type { MigratedState, MigrationProgress, Refusal } from './report.js';

/** Most log lines moved per job (the newest; the report notes jobs that had more). */
export const MAX_LOGS = 1000;
/** Most values one importJobs call writes (about: see weightOf). */
const MAX_WEIGHT = 2000;

/** A Hopper backend that can receive migrated jobs (the Redis backend). */
export type ImportingBackend = QueueBackend &
  Required<Pick<QueueBackend, 'importJobs' | 'settleChildren' | 'reserveJobIds' | 'importDedupKeys'>>;

/** A BullMQ structure the mover takes from, and what its jobs become. */
export interface Source {
  key: string;
  kind: 'list' | 'zset' | 'active';
  state: MigratedState | 'stalled';
}

/** The mover's running totals. */
export interface MoveTally {
  moved: Record<MigratedState, number>;
  alreadyThere: number;
  refusals: Refusal[];
  refusedCount: number;
  notes: string[];
  taken: number;
  givenBack: number;
}

export class Mover {
  constructor(
    private readonly src: RedisClient,
    private readonly k: BullKeys,
    private readonly backend: ImportingBackend,
    private readonly ctx: TranslateContext,
    private readonly tally: MoveTally,
    private readonly batchSize: number,
    private readonly progress: (event: MigrationProgress) => void,
  ) {}

  /**
   * Takes and moves every job of `source` it may, in BullMQ's run order. Returns how many it
   * moved and the ids it left (held by a worker, waiting for a parent, refused).
   */
  async drain(source: Source, stop: () => boolean): Promise<{ moved: number; skipped: string[] }> {
    const k = this.k;
    let offset = 0;
    let moved = 0;
    const skipped: string[] = [];
    while (!stop()) {
      const reply = (await runBullScript(
        this.src,
        TAKE,
        [source.key, k.moving, k.movingInfo, k.movingSeq, k.refused],
        [k.base, source.kind, source.state, offset, this.batchSize],
      )) as (string | number)[];
      const examined = Number(reply[0]);
      if (examined === 0) break;
      const bar = reply.indexOf('|');
      const taken = reply.slice(1, bar).map(String);
      const left = reply.slice(bar + 1).map(String);
      skipped.push(...left);
      offset += left.length;
      this.tally.taken += taken.length;
      if (taken.length > 0) moved += await this.moveTaken(taken);
    }
    return { moved, skipped };
  }

  /** The ids the moving set holds (a run that stopped before finishing them), oldest first. */
  async pendingIds(): Promise<string[]> {
    return await this.src.zrange(this.k.moving, 0, -1);
  }

  /** Reads, writes to Hopper and finishes taken jobs (in the order given). Returns how many moved. */
  async moveTaken(ids: string[]): Promise<number> {
    let moved = 0;
    for (let from = 0; from < ids.length; from += this.batchSize) {
      const slice = ids.slice(from, from + this.batchSize);
      const rows = (await runBullScript(this.src, READ_JOBS, [this.k.movingInfo], [this.k.base, MAX_LOGS, ...slice])) as RawJob[];
      const jobs: ImportedJob[] = [];
      const back: (string | number)[] = [];
      for (let i = 0; i < slice.length; i++) {
        const id = slice[i];
        const info = rows[i][0] ? (JSON.parse(rows[i][0] as string) as MovingInfo) : undefined;
        if (info?.s === 'scheduled') continue; // its scheduler's move re-creates it (bullmq-schedulers.ts)
        const t = translateJob(this.ctx, id, rows[i]);
        if (t.ok) {
          jobs.push(t.job);
          if (t.logsDropped > 0) this.note(`job ${id}: its ${t.logsDropped} oldest log lines were not moved (the newest ${MAX_LOGS} were)`);
        } else if (info) {
          this.refuse({ id, state: info.s, why: t.why });
          back.push(id, ...this.placeOf(info));
        }
      }
      if (back.length > 0) {
        this.tally.givenBack += Number(await runBullScript(this.src, GIVE_BACK, [this.k.moving, this.k.movingInfo, this.k.refused], back));
      }
      moved += await this.write(jobs);
    }
    return moved;
  }

  /** Where a refused job goes back to: its structure and score. */
  private placeOf(info: MovingInfo): [string, string] {
    const k = this.k;
    switch (info.s) {
      case 'prioritized':
        return [k.prioritized, info.sc];
      case 'delayed':
        return [k.delayed, info.sc];
      case 'failed':
        return [k.failed, info.sc];
      case 'completed':
        return [k.completed, info.sc];
      case 'waiting-children':
        return [k.waitingChildren, info.sc];
      default:
        return [k.wait, ''];
    }
  }

  /** Writes jobs to Hopper in bounded calls, then deletes them from BullMQ. */
  private async write(jobs: ImportedJob[]): Promise<number> {
    let moved = 0;
    let batch: ImportedJob[] = [];
    let weight = 0;
    const flush = async () => {
      if (batch.length === 0) return;
      const outcomes = await this.backend.importJobs(batch);
      for (let i = 0; i < batch.length; i++) {
        const job = batch[i];
        const o = outcomes[i];
        if (o.outcome === 'exists') {
          this.tally.alreadyThere++;
          continue;
        }
        this.tally.moved[job.state]++;
        moved++;
        if (o.dedupHeldElsewhere)
          this.note(`job ${job.id}: its deduplication id "${job.dedup?.id}" is held by another Hopper job; not taken`);
        if (o.parentMissing)
          this.note(`job ${job.id}: its parent ${job.parent?.queue}:${job.parent?.id} is not in Hopper; the link was dropped`);
      }
      await runBullScript(
        this.src,
        FINISH,
        [this.k.moving, this.k.movingInfo, this.k.movedParents, this.k.dedupLeases],
        [this.k.base, this.k.prefix, DEDUP_LEASE_MS, ...batch.map((j) => j.id)],
      );
      const perState = new Map<MigratedState, number>();
      for (const j of batch) perState.set(j.state, (perState.get(j.state) ?? 0) + 1);
      for (const [state, count] of perState) this.progress({ kind: 'moved', state, count, total: this.tally.moved[state] });
      batch = [];
      weight = 0;
    };
    for (const job of jobs) {
      const w = weightOf(job);
      if (weight + w > MAX_WEIGHT) await flush();
      batch.push(job);
      weight += w;
    }
    await flush();
    return moved;
  }

  /**
   * Parents moved to Hopper while children were still in BullMQ keep their dependency keys there:
   * BullMQ records those children's outcomes in them. Carries each over to the parent in Hopper
   * (settleChildren), then forgets it in BullMQ; deletes the keys once nothing is pending.
   */
  async settleParents(): Promise<void> {
    const k = this.k;
    const parents = await this.src.smembers(k.movedParents);
    for (const pid of parents) {
      const jk = k.job(pid);
      const tx = this.src.multi();
      tx.smembers(`${jk}:dependencies`);
      tx.hgetall(`${jk}:processed`);
      tx.hgetall(`${jk}:failed`);
      tx.zrange(`${jk}:unsuccessful`, 0, -1);
      const replies = (await tx.exec()) ?? [];
      const deps = new Set(replies[0]?.[1] as string[]);
      const processed = (replies[1]?.[1] ?? {}) as Record<string, string>;
      const failed = (replies[2]?.[1] ?? {}) as Record<string, string>;
      const unsuccessful = (replies[3]?.[1] ?? []) as string[];
      const entries: ExternalChildOutcome[] = [];
      const known = new Set<string>();
      for (const [key, value] of Object.entries(processed)) this.addEntry(entries, known, key, 'completed', 'none', value);
      for (const [key, reason] of Object.entries(failed)) {
        const policy = (await this.childParentFlags(key)).cpof ? 'continue' : 'ignore';
        this.addEntry(entries, known, key, 'failed', policy, reason);
      }
      for (const key of unsuccessful) {
        const reason = (await this.src.hget(key, 'failedReason')) ?? 'failed in BullMQ';
        this.addEntry(entries, known, key, 'failed', 'fail', reason);
      }
      // A child pending in Hopper's record that BullMQ no longer lists, with no outcome, and that
      // is not in Hopper either, was removed in BullMQ (or let go of with removeDependencyOnFailure).
      const hopperPending = (await this.backend.getDependencies(pid)).unprocessed;
      for (const hk of hopperPending) {
        const parsed = parseJobKey(this.ctx.hopperPrefix, hk);
        if (!parsed) continue;
        const bk = `${this.ctx.bullPrefix}:${parsed.queue}:${parsed.id}`;
        if (deps.has(bk) || known.has(bk)) continue;
        const here = await this.backend.sibling(parsed.queue).getState(parsed.id);
        if (here === 'unknown') this.addEntry(entries, known, bk, 'removed', 'none', '');
      }
      if (entries.length > 0) await this.backend.settleChildren(pid, entries);
      await runBullScript(
        this.src,
        SETTLE_PARENT,
        [k.movedParents],
        [
          jk,
          pid,
          Object.keys(processed).length,
          ...Object.keys(processed),
          Object.keys(failed).length,
          ...Object.keys(failed),
          ...unsuccessful,
        ],
      );
    }
  }

  private addEntry(
    entries: ExternalChildOutcome[],
    known: Set<string>,
    bullKey: string,
    outcome: ExternalChildOutcome['outcome'],
    policy: ExternalChildOutcome['policy'],
    value: string,
  ): void {
    const parsed = parseBullJobKey(this.ctx.bullPrefix, bullKey);
    if (!parsed) return;
    known.add(bullKey);
    entries.push({ queue: parsed.queue, id: parsed.id, outcome, policy, value });
  }

  private async childParentFlags(bullKey: string): Promise<Record<string, unknown>> {
    const raw = await this.src.hget(bullKey, 'parent');
    try {
      return raw ? (JSON.parse(raw) as Record<string, unknown>) : {};
    } catch {
      return {};
    }
  }

  private refuse(r: Refusal): void {
    this.tally.refusedCount++;
    if (this.tally.refusals.length < 100) this.tally.refusals.push(r);
    this.progress({ kind: 'refused', ...r });
  }

  private note(text: string): void {
    if (this.tally.notes.length < 100) this.tally.notes.push(text);
  }
}
