/**
 * The way back's read-only walk of a Hopper queue: what would move to BullMQ, per state, and the
 * Hopper-only state found (jobs, schedulers, queue settings), with a few example ids. The dry run
 * reports it; a run refuses on it (before its first write) unless told to drop it.
 */
import type { ExportSource } from '../backend/import-records.js';
import type { JobState } from '../job/states.js';
import { hopperOnlyOf, toBullWire, type HopperOnlyFeature } from './export-jobs.js';
import type { ExportingBackend, HopperScheduler } from './export-schedulers.js';
import type { MigratedState } from './report.js';

const PAGE = 500;

/** Hopper-only state found: per kind, how many jobs (or schedulers, settings) and a few ids. */
export type HopperOnlyFound = Partial<Record<HopperOnlyFeature, { count: number; examples: string[] }>>;

export interface ScanResult {
  wouldMove: Record<MigratedState, number>;
  /** Active jobs a worker holds (their lock is alive). */
  held: number;
  found: HopperOnlyFound;
}

function add(found: HopperOnlyFound, feature: HopperOnlyFeature, id: string): void {
  const entry = (found[feature] ??= { count: 0, examples: [] });
  entry.count++;
  if (entry.examples.length < 3) entry.examples.push(id);
}

/** Walks the queue read-only. `withHistory`: completed jobs count as moving. */
export async function scanHopper(backend: ExportingBackend, schedulers: HopperScheduler[], withHistory: boolean): Promise<ScanResult> {
  const out: ScanResult = {
    wouldMove: { waiting: 0, prioritized: 0, delayed: 0, 'waiting-children': 0, failed: 0, completed: 0 },
    held: 0,
    found: {},
  };
  const pendingRuns = new Set(schedulers.map((s) => s.record.pendingId).filter((id) => id !== ''));
  for (const s of schedulers) for (const f of s.hopperOnly) add(out.found, f, `scheduler ${s.id}`);
  const settings = await backend.getQueueSettings();
  const groupDefaults = Object.values(settings.groupDefaults ?? {}).some((v) => v !== undefined);
  if (settings.globalConcurrency !== undefined || settings.rateLimit !== undefined || groupDefaults)
    add(out.found, 'queue-settings', 'queue');
  const states: JobState[] = ['waiting', 'prioritized', 'delayed', 'failed', 'waiting-children', 'active'];
  if (withHistory) states.push('completed');
  // A grouped ready job is listed both as waiting and in its group's queue: counted once.
  const seen = new Set<string>();
  const visit = async (ids: string[], state: ExportSource['state']) => {
    const jobs = await backend.exportRead(ids, 1, true);
    for (let i = 0; i < ids.length; i++) {
      const job = jobs[i];
      if (!job || pendingRuns.has(ids[i]) || seen.has(ids[i])) continue;
      seen.add(ids[i]);
      for (const f of hopperOnlyOf(job)) add(out.found, f, ids[i]);
      job.from = state;
      out.wouldMove[toBullWire(job).state]++;
    }
  };
  for (const state of states) {
    for (let start = 0; ; start += PAGE) {
      const ids = await backend.getRange(state, start, start + PAGE - 1, true);
      if (ids.length === 0) break;
      // Active jobs: moved once they finish or are back in a list (or their lock expires).
      if (state === 'active') out.held += ids.length;
      else await visit(ids, state);
      if (ids.length < PAGE) break;
    }
  }
  for (let start = 0; ; start += PAGE) {
    const groups = await backend.getGroups(start, start + PAGE - 1);
    for (const g of groups) {
      // Its jobs are counted one by one (hopperOnlyOf); a group holding none is counted itself.
      for (let from = 0; ; from += PAGE) {
        const ids = await backend.getGroupJobIds(g.id, from, from + PAGE - 1);
        if (ids.length === 0) {
          if (from === 0) add(out.found, 'groups', `group ${g.id}`);
          break;
        }
        await visit(ids, 'waiting');
        if (ids.length < PAGE) break;
      }
    }
    if (groups.length < PAGE) break;
  }
  return out;
}

/** The refusal message naming the Hopper-only state found. */
export function describeFound(found: HopperOnlyFound, describe: Record<HopperOnlyFeature, string>): string {
  return Object.entries(found)
    .map(([f, e]) => `${e.count} × ${describe[f as HopperOnlyFeature]} (e.g. ${e.examples.join(', ')})`)
    .join('; ');
}
