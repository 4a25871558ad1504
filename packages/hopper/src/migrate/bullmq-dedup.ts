/**
 * Deduplication across the switch, on both sides (docs/migrating.md). A job that moves carries its
 * deduplication id (importJobs); two cases need more, and this module handles them:
 * - **Ids with a ttl whose job did not move with them** (it finished in BullMQ, or a BullMQ worker
 *   still runs it): BullMQ deduplicates adds with that id until the ttl ends, so `carry` copies each
 *   such key to Hopper (same id, same job id, the ms it has left: importDedupKeys), found by a
 *   bounded SCAN over `<prefix>:<queue>:de:*`, and `carryJobs` those of the jobs BullMQ's events
 *   show a worker took, at the bridge's next pass. Idempotent: a re-run writes the same; an id Hopper
 *   already holds keeps its holder.
 * - **Ids without a ttl** (held until their job finishes) of moved jobs: BullMQ's add takes such a
 *   key for a stale one once the job's hash is gone and makes a new job, so the move would let
 *   BullMQ producers double a job the bridge then moves. `finish` (bullmq-scripts.ts) leases the
 *   key instead of deleting it: it keeps naming the moved job, with a ttl of DEDUP_LEASE_MS, and
 *   is listed in the migration's `dedup-leases` hash. `keepLeases` renews each lease while the job
 *   holds its id in Hopper, and ends it (deleting BullMQ's key) once the job no longer does (it
 *   finished or was removed there). If the migration stops, each lease expires by itself.
 */
import type { ImportedDedupKey } from '../backend/import-records.js';
import type { RedisClient } from '../backend/redis/connection.js';
import type { BullKeys } from './bullmq-keys.js';
import { KEEP_LEASES, READ_DEDUP_KEYS, READ_JOB_DEDUP_KEYS, runBullScript } from './bullmq-scripts.js';
import type { ImportingBackend } from './mover.js';

/** The ttl of a leased deduplication key, ms: how long it outlives a stopped migration. */
export const DEDUP_LEASE_MS = 30_000;
/** How often the leases are checked against Hopper, ms (a finished job's key goes within about this). */
export const LEASE_CHECK_MS = 1000;
/** The least time between two scans of BullMQ's deduplication keys, ms (more when a scan is slow). */
const MIN_SCAN_INTERVAL_MS = 5000;
/** Keys per SCAN page, and leases per check call. */
const PAGE = 500;

/** What the deduplication keeper did over a run. */
export interface DedupTally {
  /** Deduplication ids with a ttl written to Hopper for jobs that did not carry them. */
  carried: number;
  /** Leased deduplication keys (without ttl, of moved jobs) ended: their job no longer held the id in Hopper, or the run ended. */
  leasesEnded: number;
}

export class DedupKeeper {
  private nextScan = 0;
  private nextCheck = 0;
  readonly tally: DedupTally = { carried: 0, leasesEnded: 0 };

  constructor(
    private readonly src: RedisClient,
    private readonly k: BullKeys,
    private readonly backend: ImportingBackend,
  ) {}

  /**
   * Copies BullMQ's deduplication keys with a ttl to Hopper: at the first call, then at most every
   * MIN_SCAN_INTERVAL_MS (or ten times the last scan's duration, if longer); `force` scans now.
   */
  async carry(force = false): Promise<void> {
    const started = Date.now();
    if (!force && started < this.nextScan) return;
    const dePrefix = `${this.k.base}de:`;
    const pattern = `${dePrefix.replace(/[*?[\]\\]/g, (c) => `\\${c}`)}*`;
    let cursor = '0';
    do {
      const reply = (await runBullScript(
        this.src,
        READ_DEDUP_KEYS,
        [this.k.meta, this.k.dedupLeases],
        [pattern, cursor, PAGE, dePrefix.length],
      )) as (string | number)[];
      cursor = String(reply[0]);
      await this.write(reply, 1);
    } while (cursor !== '0');
    const took = Date.now() - started;
    this.nextScan = Date.now() + Math.max(MIN_SCAN_INTERVAL_MS, 10 * took);
  }

  /**
   * Copies to Hopper the deduplication keys with a ttl of jobs BullMQ workers took (`active`,
   * `completed` or `failed` in BullMQ's events since the last pass): such a job does not move with
   * its key, and waiting for the next scan would leave its id unknown to Hopper meanwhile.
   */
  async carryJobs(ids: string[]): Promise<void> {
    for (let from = 0; from < ids.length; from += PAGE) {
      const reply = (await runBullScript(
        this.src,
        READ_JOB_DEDUP_KEYS,
        [this.k.dedupLeases],
        [this.k.base, ...ids.slice(from, from + PAGE)],
      )) as (string | number)[];
      await this.write(reply, 0);
    }
  }

  private async write(flat: (string | number)[], start: number): Promise<void> {
    const keys: ImportedDedupKey[] = [];
    for (let i = start; i + 2 < flat.length; i += 3) {
      keys.push({ id: String(flat[i]), jobId: String(flat[i + 1]), ttlMs: Number(flat[i + 2]) });
    }
    for (let from = 0; from < keys.length; from += PAGE) {
      const outcome = await this.backend.importDedupKeys(keys.slice(from, from + PAGE));
      this.tally.carried += outcome.written;
    }
  }

  /** Ms until the leases are next due for a check (Infinity when there are none to check). */
  async leaseCheckIn(): Promise<number> {
    if ((await this.src.hlen(this.k.dedupLeases)) === 0) return Infinity;
    return Math.max(0, this.nextCheck - Date.now());
  }

  /**
   * Renews the leases whose job still holds its id in Hopper and ends the others (at most every
   * LEASE_CHECK_MS; `endAll` ends every lease now: the migration is done).
   */
  async keepLeases(endAll = false): Promise<void> {
    if (!endAll && Date.now() < this.nextCheck) return;
    this.nextCheck = Date.now() + LEASE_CHECK_MS;
    let cursor = '0';
    do {
      const [next, flat] = await this.src.hscan(this.k.dedupLeases, cursor, 'COUNT', PAGE);
      cursor = next;
      const args: (string | number)[] = [];
      const pairs: [string, string][] = [];
      for (let i = 0; i + 1 < flat.length; i += 2) pairs.push([flat[i], flat[i + 1]]);
      const holders = endAll ? [] : await Promise.all(pairs.map(([id]) => this.backend.getDeduplicationJobId(id)));
      pairs.forEach(([id, jobId], i) => args.push(id, jobId, !endAll && holders[i] === jobId ? '1' : '0'));
      if (args.length === 0) continue;
      const [, ended] = (await runBullScript(
        this.src,
        KEEP_LEASES,
        [this.k.dedupLeases],
        [this.k.base, DEDUP_LEASE_MS, ...args],
      )) as number[];
      this.tally.leasesEnded += Number(ended);
    } while (cursor !== '0');
  }
}
