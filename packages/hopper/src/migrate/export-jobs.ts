/**
 * The way back's view of one Hopper job: the Hopper-only state it carries (what BullMQ has no
 * place for), and the job as writeJobs (bullmq-write-scripts.ts) writes it in BullMQ's layout.
 */
import type { ExportedJob } from '../backend/import-records.js';

/** Hopper-only state the way back cannot carry to BullMQ. */
export type HopperOnlyFeature =
  'groups' | 'steps' | 'dead-letters' | 'budgets' | 'runs' | 'timeouts' | 'flows' | 'scheduler-policies' | 'queue-settings';

/** What each kind of Hopper-only state is, and what dropping it means, for messages. */
export const HOPPER_ONLY: Record<HopperOnlyFeature, string> = {
  groups: 'jobs in groups (dropped: they move as plain jobs, without their group and its limits)',
  steps: 'jobs with durable steps recorded (dropped: the steps run again in BullMQ)',
  'dead-letters': 'dead-letter routes or dead-letter records (dropped: failed jobs stay in failed; records move as plain jobs)',
  budgets: 'jobs with a cost charged to a budget or a weighted limit (dropped: the cost option is removed)',
  runs: 'jobs in a run of turns, continueWith (dropped: they move as plain jobs; the run record stays in Hopper)',
  timeouts: 'jobs with a timeout option (dropped: BullMQ has no job timeout)',
  flows: 'flows: parents waiting for children, children of a parent (dropped: each moves as a plain job, parents as waiting)',
  'scheduler-policies':
    'job schedulers with jitter, an overlap or catch-up policy, or paused (dropped: they move as plain schedulers, running)',
  'queue-settings': 'queue settings: global concurrency, rate limit, group defaults (dropped: set them again on BullMQ)',
};

/** Option names Hopper has and BullMQ does not, and the state each belongs to. */
const HOPPER_OPTIONS: [string, HopperOnlyFeature][] = [
  ['group', 'groups'],
  ['deadLetter', 'dead-letters'],
  ['cost', 'budgets'],
  ['timeout', 'timeouts'],
  ['parent', 'flows'],
];

/** BullMQ stores a few options under short names (its optsEncodeMap). */
const SHORT_NAMES: Record<string, string> = {
  deduplication: 'de',
  failParentOnFailure: 'fpof',
  continueParentOnFailure: 'cpof',
  ignoreDependencyOnFailure: 'idof',
  keepLogs: 'kl',
  removeDependencyOnFailure: 'rdof',
};

function optionsOf(job: ExportedJob): Record<string, unknown> {
  if (!job.record.opts) return {};
  try {
    const parsed = JSON.parse(job.record.opts) as unknown;
    return parsed && typeof parsed === 'object' ? (parsed as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/** The Hopper-only state job `job` carries (none: it moves whole). */
export function hopperOnlyOf(job: ExportedJob): HopperOnlyFeature[] {
  const found = new Set<HopperOnlyFeature>();
  const opts = optionsOf(job);
  for (const [name, feature] of HOPPER_OPTIONS) if (opts[name] !== undefined) found.add(feature);
  if (job.group !== undefined) found.add('groups');
  if (job.steps > 0) found.add('steps');
  if (job.record.origin) found.add('dead-letters');
  if (job.budgetTenant !== undefined) found.add('budgets');
  if (job.runId !== undefined) found.add('runs');
  if (job.record.parent || job.children > 0 || job.from === 'waiting-children') found.add('flows');
  return [...found];
}

/** A job as writeJobs takes it (see its header), or why it cannot move. */
export type BullWire = Record<string, unknown> & { i: string; s: string };

/** The BullMQ state a job enters. */
export type BullState = 'waiting' | 'prioritized' | 'delayed' | 'failed' | 'completed';

/** Translates a job read from the moving set into BullMQ's layout, Hopper-only options removed. */
export function toBullWire(job: ExportedJob): { wire: BullWire; state: BullState } {
  const r = job.record;
  const opts: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(optionsOf(job))) {
    if (HOPPER_OPTIONS.some(([name]) => name === key)) continue;
    if (key === 'telemetry' && value && typeof value === 'object') {
      const t = value as { metadata?: unknown; omitContext?: unknown };
      if (t.metadata !== undefined) opts.tm = t.metadata;
      if (t.omitContext !== undefined) opts.omc = t.omitContext;
      continue;
    }
    opts[SHORT_NAMES[key] ?? key] = value;
  }
  let state: BullState;
  let front = false;
  let stalls = r.stalledCounter;
  switch (job.from) {
    case 'delayed':
      state = 'delayed';
      break;
    case 'failed':
      state = 'failed';
      break;
    case 'completed':
      state = 'completed';
      break;
    case 'stalled':
      // Its lock had expired: back at the head of the line, a stall counted (as a rescue does).
      front = true;
      stalls += 1;
      state = r.priority > 0 ? 'prioritized' : 'waiting';
      break;
    default:
      state = r.priority > 0 ? 'prioritized' : 'waiting';
  }
  const wire: BullWire = {
    i: r.id,
    n: r.name,
    d: r.data,
    o: JSON.stringify(opts),
    t: r.timestamp,
    dl: r.delay,
    p: r.priority,
    am: r.attemptsMade,
    as: r.attemptsStarted,
    sc: stalls,
    s: state,
    lg: job.logs,
  };
  if (state === 'delayed') wire.du = Number(job.score);
  if (front) wire.fr_ = 1;
  if (r.processedOn !== undefined) wire.po = r.processedOn;
  if (r.finishedOn !== undefined && (state === 'failed' || state === 'completed')) wire.fo = r.finishedOn;
  if (state === 'completed' && r.returnvalue !== undefined) wire.rv = r.returnvalue;
  if (r.failedReason !== undefined) wire.fr = r.failedReason;
  if (r.stacktrace !== undefined) wire.st = r.stacktrace;
  if (r.progress !== undefined) wire.pg = r.progress;
  if (r.processedBy !== undefined) wire.pb = r.processedBy;
  if (job.dedup && state !== 'failed' && state !== 'completed') wire.de = { i: job.dedup.id, t: job.dedup.ttlMs };
  return { wire, state };
}

/** How many values a job writes in BullMQ (to bound a batch). */
export function weightOfWire(wire: BullWire): number {
  return 30 + (wire.lg as string[]).length;
}
