/**
 * The live switch's ledger: every job added on either side (BullMQ or Hopper), every run of a
 * processor on either side, scheduler occurrences by instant, the children's values each parent
 * saw, and the due time of each short-delayed job. Processors and producers write to it; the test
 * waits on it (`until`) and reads the verdict from it (`verdict`).
 */

/** Which side ran or added a job. */
export type Side = 'bullmq' | 'hopper';

/** One processor run. */
export interface Run {
  side: Side;
  startedAt: number;
}

/** What a processor sees of a job, on either side. */
export interface SeenJob {
  id?: string;
  name: string;
  getChildrenValues(): Promise<Record<string, unknown>>;
}

/** Percentiles of a list of numbers. */
export interface Spread {
  count: number;
  p50: number;
  p99: number;
  max: number;
  min: number;
}

export function spread(values: number[]): Spread {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? 0;
  return { count: sorted.length, p50: at(0.5), p99: at(0.99), max: sorted[sorted.length - 1] ?? 0, min: sorted[0] ?? 0 };
}

/** The scheduler occurrences seen, by scheduler id. */
export interface Occurrence {
  instant: number;
  side: Side;
}

export class Ledger {
  /** Ids added (by the ids the add returned), with the side that added them. */
  readonly added = new Map<string, Side>();
  /** Ids that must not run: delayed for days. */
  readonly longDelayed = new Map<string, number>();
  /** Due time of each short-delayed job (ms). */
  readonly due = new Map<string, number>();
  readonly runs = new Map<string, Run[]>();
  readonly occurrences = new Map<string, Occurrence[]>();
  /** Children's values each parent saw when it ran. */
  readonly childValues = new Map<string, Record<string, unknown>>();
  /** Each parent's children ids. */
  readonly children = new Map<string, string[]>();
  /** The ids each deduplication id's adds returned. */
  readonly dedup = new Map<string, Set<string>>();
  private waiters: { check: () => boolean; resolve: () => void }[] = [];

  add(id: string | undefined, side: Side): string {
    if (id === undefined) throw new Error('an add returned no id');
    if (!this.added.has(id)) this.added.set(id, side);
    this.poke();
    return id;
  }

  addDedup(key: string, id: string | undefined, side: Side): void {
    const returned = this.add(id, side);
    let ids = this.dedup.get(key);
    if (!ids) this.dedup.set(key, (ids = new Set()));
    ids.add(returned);
  }

  /** The processor of both sides: records the run, what a parent saw, a scheduler's instant. */
  async process(job: SeenJob, side: Side): Promise<{ v: string }> {
    const startedAt = Date.now();
    const id = job.id!;
    if (job.name.startsWith('tick-')) {
      // An occurrence's id ends with its instant on both sides (`repeat:<id>:<ms>`, as BullMQ);
      // BullMQ's `every` occurrences carry no prevMillis.
      const list = this.occurrences.get(job.name) ?? [];
      const instant = Number(id.slice(id.lastIndexOf(':') + 1));
      list.push({ instant: Number.isInteger(instant) && instant > 0 ? instant : -1, side });
      this.occurrences.set(job.name, list);
    } else {
      const list = this.runs.get(id) ?? [];
      list.push({ side, startedAt });
      this.runs.set(id, list);
      if (this.children.has(id)) this.childValues.set(id, await job.getChildrenValues());
    }
    this.poke();
    return { v: id };
  }

  /** Records a run done by hand (a BullMQ child completed through getNextJob). */
  ranByHand(id: string): void {
    this.runs.set(id, [{ side: 'bullmq', startedAt: Date.now() }]);
  }

  /** Resolves once `check` holds (checked after every add and run). */
  until(check: () => boolean): Promise<void> {
    if (check()) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ check, resolve }));
  }

  /** Re-checks the waiters. */
  poke(): void {
    this.waiters = this.waiters.filter((w) => {
      if (!w.check()) return true;
      w.resolve();
      return false;
    });
  }

  /** Ids added that must run (all but the long-delayed ones). */
  expected(): string[] {
    return [...this.added.keys()].filter((id) => !this.longDelayed.has(id));
  }

  /** Whether every id that must run has run. */
  allRan(): boolean {
    for (const id of this.expected()) if (!this.runs.has(id)) return false;
    return true;
  }

  occurrencesOf(name: string): number {
    return this.occurrences.get(name)?.length ?? 0;
  }

  /** The counts the test asserts and prints. */
  verdict(): Verdict {
    const expected = this.expected();
    const lost = expected.filter((id) => !this.runs.has(id));
    const doubled = [...this.runs].filter(([, r]) => r.length > 1).map(([id]) => id);
    const unknown = [...this.runs.keys()].filter((id) => !this.added.has(id));
    const ranEarly = [...this.longDelayed.keys()].filter((id) => this.runs.has(id));
    const lateness: number[] = [];
    const early: string[] = [];
    for (const [id, due] of this.due) {
      const run = this.runs.get(id)?.[0];
      if (!run) continue;
      lateness.push(run.startedAt - due);
      if (run.startedAt < due) early.push(id);
    }
    const bySide = { bullmq: 0, hopper: 0 };
    for (const r of this.runs.values()) bySide[r[0].side]++;
    const addedBySide = { bullmq: 0, hopper: 0 };
    for (const side of this.added.values()) addedBySide[side]++;
    return {
      added: this.added.size,
      addedBySide,
      ran: this.runs.size,
      ranBySide: bySide,
      lost,
      doubled,
      unknown,
      ranEarly,
      early,
      lateness: spread(lateness),
    };
  }
}

/** What the ledger says at the end. */
export interface Verdict {
  added: number;
  addedBySide: Record<Side, number>;
  ran: number;
  ranBySide: Record<Side, number>;
  /** Ids added that never ran. */
  lost: string[];
  /** Ids that ran more than once. */
  doubled: string[];
  /** Ids that ran but were never added. */
  unknown: string[];
  /** Long-delayed ids that ran. */
  ranEarly: string[];
  /** Short-delayed ids that started before their due time. */
  early: string[];
  /** Short-delayed jobs' start minus due time (ms). */
  lateness: Spread;
}

/**
 * A scheduler's occurrences checked: no instant twice, and the instants later than `after` missing
 * between the first and the last (each `period` ms apart).
 */
export function checkOccurrences(
  list: Occurrence[],
  period: number,
  after = 0,
): { runs: number; twice: number[]; missing: number[]; noInstant: number; sides: string } {
  const seen = new Map<number, number>();
  let noInstant = 0;
  for (const o of list) {
    if (o.instant < 0) noInstant++;
    else seen.set(o.instant, (seen.get(o.instant) ?? 0) + 1);
  }
  const twice = [...seen].filter(([, n]) => n > 1).map(([i]) => i);
  const instants = [...seen.keys()].sort((a, b) => a - b);
  // The instants missing between two that ran (at most 100 listed: a long gap is one finding).
  const missing: number[] = [];
  for (let i = 1; i < instants.length && missing.length < 100; i++) {
    for (let t = instants[i - 1] + period; t < instants[i] && missing.length < 100; t += period) if (t > after) missing.push(t);
  }
  const bull = list.filter((o) => o.side === 'bullmq').length;
  return { runs: list.length, twice, missing, noInstant, sides: `${bull} in BullMQ, ${list.length - bull} in Hopper` };
}
