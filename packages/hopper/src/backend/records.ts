/**
 * Records the backend seam passes for job schedulers and groups (re-exported by backend.ts).
 */

/** A scheduler as written by upsert: its validated spec and job template, serialised. */
export interface SchedulerWrite {
  id: string;
  /** Digest of spec + template: an upsert with the same one changes nothing. */
  hash: string;
  /** JSON of the validated ScheduleSpec. */
  spec: string;
  /** JSON of { name, data (JSON string), opts (JSON string), priority }. */
  template: string;
  overlap: string;
  catchup: string;
  catchupWindow: number;
  /** 0 = no limit. */
  limit: number;
  paused: boolean;
}

/** One occurrence to create when advancing a scheduler. */
export interface OccurrencePlan {
  instant: number;
  due: number;
  /** The one that waits for its time (at most one); others are catch-up runs, due now. */
  pending: boolean;
}

/** A scheduler as stored. */
export interface SchedulerRecord {
  id: string;
  spec: string;
  template: string;
  paused: boolean;
  /** The last instant an occurrence was created for ('' if none yet). */
  last: string;
  /** The pending occurrence's due time, if any. */
  nextDue: number | undefined;
  pendingId: string;
  fired: number;
  skipped: number;
  missed: number;
  created: number;
  limit: number;
  createdAt: number;
}

/** Where a group stands: taking turns, parked at its concurrency or rate limit, paused, or with no backlog. */
export type GroupStatus = 'ready' | 'maxed' | 'limited' | 'paused' | 'idle';

/** A group as stored: its status, counts and its own settings (queue defaults not applied). */
export interface GroupRecord {
  id: string;
  status: GroupStatus;
  /** Ready jobs without a priority. */
  waiting: number;
  /** Ready jobs with a priority. */
  prioritized: number;
  active: number;
  concurrency: number | undefined;
  /** `weight: 'cost'`: a weighted limiter (each job counts its cost). */
  limiter: { max: number; duration: number; weight?: 'cost' } | undefined;
  maxSize: number | undefined;
  weight: number | undefined;
}
