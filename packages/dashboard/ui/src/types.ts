/** The shapes the dashboard API returns (what the UI reads of them). */
export type Counts = Record<string, number>;

export interface QueueOverview {
  name: string;
  paused: boolean;
  counts: Counts;
  workers: number;
  schedulers: number;
  oldestWaitingMs: number | null;
}

export interface JobView {
  id: string;
  name: string;
  state?: string;
  data: unknown;
  opts: Record<string, unknown>;
  progress: unknown;
  attemptsMade: number;
  timestamp: number;
  processedOn: number | null;
  finishedOn: number | null;
  failedReason: string | null;
  stacktrace: string[];
  returnvalue: unknown;
  parentKey: string | null;
  delay: number;
  priority: number;
  deadLetterOrigin: { queue: string; jobId: string; failedOn?: number } | null;
}

export interface JobDetail extends JobView {
  logs: string[];
  logCount: number;
  steps: { key: string; result?: unknown; error?: string; durationMs: number; at: number }[];
  children: { pending: string[]; pendingTotal: number; processed: string[]; processedTotal: number };
  /** The job's streamed output (job.stream), null where the backend keeps none. */
  output: { chunks: { id: string; attempt: number; data: unknown }[]; truncated: boolean } | null;
  /** Values cut to keep the reply within the server's byte limit (each ends with "… [cut: N bytes]"). */
  cut: number;
}

export interface JobPage {
  state: string;
  offset: number;
  limit: number;
  total: number;
  jobs: JobView[];
}

export interface ScanPage {
  cursor: number | null;
  scanned: number;
  total: number;
  jobs: JobView[];
}

export interface Series {
  source: 'metrics' | 'sample';
  newestMinute: number;
  completed: number[];
  failed: number[];
  latency: { sample: number; waitP50: number | null; waitP95: number | null; runP50: number | null; runP95: number | null };
}

export interface SchedulerState {
  id: string;
  name: string;
  pattern?: string;
  every?: number;
  tz: string;
  paused: boolean;
  next?: number;
  fired: number;
  skippedByOverlap: number;
  missed: number;
  created: number;
  limit?: number;
}

export interface GroupInfo {
  id: string;
  status: string;
  waiting: number;
  prioritized: number;
  active: number;
  concurrency?: number;
  limiter?: { max: number; duration: number };
}

export interface AuditEntry {
  at: number;
  who: string;
  action: string;
  target: string;
  detail?: string;
}
