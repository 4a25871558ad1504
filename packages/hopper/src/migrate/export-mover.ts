/**
 * Moves batches of jobs from Hopper back to BullMQ, exactly once: take (Hopper's structure ->
 * the queue's export moving set, exportTake), read, write to BullMQ (writeJobs: a job already
 * there is kept), then delete from Hopper (exportFinish). A crash between any two steps leaves
 * the job in the moving set (and maybe in BullMQ too): a re-run finishes the moving set first,
 * and a copy found in BullMQ wins.
 */
import type { ExportSource } from '../backend/import-records.js';
import type { RedisClient } from '../backend/redis/connection.js';
import { MigrationError } from '../job/errors.js';
import type { BullKeys } from './bullmq-keys.js';
import { runBullScript } from './bullmq-scripts.js';
import { WRITE_JOBS } from './bullmq-write-scripts.js';
import {
  HOPPER_ONLY,
  hopperOnlyOf,
  toBullWire,
  weightOfWire,
  type BullState,
  type BullWire,
  type HopperOnlyFeature,
} from './export-jobs.js';
import type { ExportingBackend } from './export-schedulers.js';
import { MAX_LOGS, type MoveTally } from './mover.js';
import type { MigrationProgress } from './report.js';

/** Most values one writeJobs call writes (about: see weightOfWire). */
const MAX_WEIGHT = 2000;

/** The BullMQ queue the way back writes to. */
export interface BullTarget {
  client: RedisClient;
  k: BullKeys;
  /** The layout's major version. */
  major: 5 | 6;
}

export class ExportMover {
  /** Hopper-only state dropped so far, per kind (jobs). */
  readonly dropped: Partial<Record<HopperOnlyFeature, number>> = {};
  /** Taken jobs found gone when read (removed meanwhile, or a scheduler's run already withdrawn). */
  vanished = 0;

  constructor(
    private readonly backend: ExportingBackend,
    private readonly target: BullTarget,
    private readonly tally: MoveTally,
    private readonly drop: boolean,
    private readonly batchSize: number,
    private readonly progress: (event: MigrationProgress) => void,
  ) {}

  /** Takes and moves every job of `source` it may, in run order. Returns how many moved and the ids left. */
  async drain(source: ExportSource, stop: () => boolean): Promise<{ moved: number; skipped: string[] }> {
    let offset = 0;
    let moved = 0;
    const skipped: string[] = [];
    while (!stop()) {
      const r = await this.backend.exportTake(source, offset, this.batchSize);
      if (r.examined === 0) break;
      skipped.push(...r.skipped);
      offset += r.skipped.length;
      this.tally.taken += r.taken.length;
      if (r.taken.length > 0) moved += await this.moveTaken(r.taken);
    }
    return { moved, skipped };
  }

  /** Reads, writes to BullMQ and finishes taken jobs (in the order given). Returns how many moved. */
  async moveTaken(ids: string[]): Promise<number> {
    let moved = 0;
    for (let from = 0; from < ids.length; from += this.batchSize) {
      const slice = ids.slice(from, from + this.batchSize);
      const jobs = await this.backend.exportRead(slice, MAX_LOGS);
      const wires: { wire: BullWire; state: BullState }[] = [];
      const gone: string[] = [];
      const refused: { id: string; features: HopperOnlyFeature[] }[] = [];
      for (let i = 0; i < slice.length; i++) {
        const job = jobs[i];
        if (!job) {
          gone.push(slice[i]);
          continue;
        }
        if (job.from === 'scheduled') continue; // its scheduler's move writes it (export-schedulers.ts)
        const features = hopperOnlyOf(job);
        if (features.length > 0 && !this.drop) {
          refused.push({ id: slice[i], features });
          continue;
        }
        for (const f of features) this.dropped[f] = (this.dropped[f] ?? 0) + 1;
        if (job.logCount > job.logs.length) {
          this.note(`job ${slice[i]}: its ${job.logCount - job.logs.length} oldest log lines were not moved (the newest ${MAX_LOGS} were)`);
        }
        wires.push(toBullWire(job));
      }
      if (gone.length > 0) {
        this.vanished += gone.length;
        await this.backend.exportFinish(gone);
      }
      if (refused.length > 0) {
        // Hopper-only state added after the run's first check: given back, and the run stops.
        this.tally.givenBack += await this.backend.exportGiveBack(refused.map((r) => r.id));
        moved += await this.write(wires);
        const kinds = [...new Set(refused.flatMap((r) => r.features))];
        throw new MigrationError(
          'hopper-only-state',
          `Job ${refused[0].id} (and ${refused.length - 1} more) carries Hopper-only state that BullMQ cannot hold: ` +
            `${kinds.map((f) => HOPPER_ONLY[f]).join('; ')}. It stays in Hopper. Run again with --drop-hopper-only to move it without that state.`,
        );
      }
      moved += await this.write(wires);
    }
    return moved;
  }

  /** Writes jobs to BullMQ in bounded calls, then deletes them from Hopper. */
  private async write(jobs: { wire: BullWire; state: BullState }[]): Promise<number> {
    const { client, k, major } = this.target;
    let moved = 0;
    let batch: { wire: BullWire; state: BullState }[] = [];
    let weight = 0;
    const flush = async () => {
      if (batch.length === 0) return;
      const flags = (await runBullScript(
        client,
        WRITE_JOBS,
        [k.meta, k.id, k.wait, k.paused, k.prioritized, `${k.base}pc`, k.delayed, k.completed, k.failed, k.marker],
        [k.base, major, ...batch.map((j) => JSON.stringify(j.wire))],
      )) as number[];
      const perState = new Map<BullState, number>();
      for (let i = 0; i < batch.length; i++) {
        if (flags[i] === 0) {
          this.tally.alreadyThere++;
          continue;
        }
        const { wire, state } = batch[i];
        this.tally.moved[state]++;
        perState.set(state, (perState.get(state) ?? 0) + 1);
        moved++;
        if (flags[i] === 3) {
          const de = wire.de as { i: string };
          this.note(`job ${wire.i}: its deduplication id "${de.i}" is held by another BullMQ job; not taken`);
        }
      }
      await this.backend.exportFinish(batch.map((j) => j.wire.i));
      for (const [state, count] of perState) this.progress({ kind: 'moved', state, count, total: this.tally.moved[state] });
      batch = [];
      weight = 0;
    };
    for (const job of jobs) {
      const w = weightOfWire(job.wire);
      if (weight + w > MAX_WEIGHT) await flush();
      batch.push(job);
      weight += w;
    }
    await flush();
    return moved;
  }

  private note(text: string): void {
    if (this.tally.notes.length < 100) this.tally.notes.push(text);
  }
}
