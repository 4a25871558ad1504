/**
 * The only place Redis keys are built. A queue's keys are `prefix:{name}:...`, so they share one
 * hash tag and one Redis Cluster slot. When the prefix already holds a `{tag}` (BullMQ's cluster
 * convention), that tag governs, since Redis hashes the first one: keys are `prefix:name:...`.
 */

/** The keys of one queue. `base` ends with ':'; scripts build job keys from it. */
export interface QueueKeys {
  readonly base: string;
  /** Hash: paused flag, events cap, layout version. */
  readonly meta: string;
  /** Counter for auto ids. */
  readonly id: string;
  /** List of waiting job ids; the head runs next. */
  readonly wait: string;
  /** Sorted set of prioritized job ids (score: priority, then FIFO counter). */
  readonly prio: string;
  /** Counter giving FIFO order within a priority. */
  readonly prioCounter: string;
  /** Sorted set of delayed job ids by due time (ms). */
  readonly delayed: string;
  /** Sorted set of active job ids by lock deadline (ms). */
  readonly active: string;
  /** Sorted set of completed job ids by finish time. */
  readonly completed: string;
  /** Sorted set of failed job ids by finish time. */
  readonly failed: string;
  /** Capped stream of queue events. */
  readonly events: string;
  /** List idle workers block on; producers push one element to wake one. */
  readonly marker: string;
  /** Key that limits stall checks to one per interval across workers. */
  readonly stalledCheck: string;
  /** While this key lives, the queue is rate-limited (worker.rateLimit). */
  readonly limiter: string;
  /** Sorted set of live workers by heartbeat deadline. */
  readonly workers: string;
  /** Hash of worker id -> JSON description. */
  readonly workerInfo: string;
  /** String: the job id a deduplication id points to. */
  dedup(id: string): string;
  /** Hash: the add kept for when the active job holding a deduplication id finishes (keepLastIfActive). */
  dedupKept(id: string): string;
  /** Sorted set of job scheduler ids by their pending occurrence's due time. */
  readonly schedulers: string;
  /** Sorted set of schedulers whose next occurrence must be computed. */
  readonly schedDue: string;
  /** Hash of one job scheduler. */
  scheduler(id: string): string;
  /** Pub/sub channel telling workers that one of their active jobs was cancelled. */
  readonly cancelChannel: string;
  /** Hash of a producer's recent add requests (re-sent adds are applied once). */
  requests(producerId: string): string;
  /** Hash of one job. */
  job(id: string): string;
  /** String holding a job's data when it is too large to keep in the hash. */
  data(id: string): string;
  /** List of one job's log lines. */
  logs(id: string): string;
  /** Hash of one job's durable steps. */
  steps(id: string): string;
  /** Hash of a run of turns (`continueWith`): latest turn, cost, cancel reason. */
  run(runId: string): string;
  /** Stream of one job's output (`job.stream`). */
  output(id: string): string;
  /** Stream a reader of job outputs writes to, to wake the queue's blocked output readers (capped). */
  readonly outputWake: string;
  /** Sorted set of parents waiting for their children, by the time they started waiting. */
  readonly waitingChildren: string;
  /** Set of a parent's pending children (their public keys: `<prefix>:<queue>:<id>`, see job/job-key.ts). */
  deps(id: string): string;
  /** Hash of a parent's completed children: child key -> return value (JSON). */
  processed(id: string): string;
  /** Hash of a parent's children that failed for good: child key -> failed reason. */
  failedChildren(id: string): string;
  /** Hash: child key -> failed reason of the children a parent let go of (continueParentOnFailure, ignoreDependencyOnFailure). */
  ignoredChildren(id: string): string;
  /** Set of a cancelled parent's children still to cancel (kept a day). */
  cancelChildren(id: string): string;
  /** Sorted set of the queue's job start times for its rate limit (sliding window). */
  readonly rateWindow: string;
  /** Weighted rate limit's window: entries '<id>:<attempt>:<weight>' by start time (includes/window.lua). */
  readonly weightedWindow: string;
  /** Sum of the weighted window's weights. */
  readonly weightedSum: string;
  /** A tenant's budget window: entries '<jobId>:<cost>' by add time (written by addJobs, includes/window.lua). */
  budgetWindow(tenant: string): string;
  /** Sum of a tenant's budget window. */
  budgetSum(tenant: string): string;
  /** Not a key: the connection name (CLIENT SETNAME) of a QueueEvents reader of this queue (no spaces). */
  readonly eventsReaderName: string;
  /** List of ready groups taking turns ('' stands for the jobs without a group); see includes/groups.lua. */
  readonly groupRing: string;
  /** Sorted set of groups parked by their rate limit, by the time their window reopens. */
  readonly groupsLimited: string;
  /** Sorted set (score 0) of every known group, for listing. */
  readonly groups: string;
  /** Set of groups parked at their concurrency limit. */
  readonly groupsParked: string;
  /** List of idle groups to forget once their last active job leaves. */
  readonly groupsIdle: string;
  /** Hash of one group: status, active count, turn, own settings. */
  group(id: string): string;
  /** Sorted set of one group's ready jobs (score: priority, then FIFO counter). */
  groupQueue(id: string): string;
  /** Sorted set of one group's job start times (its rate limit's sliding window). */
  groupWindow(id: string): string;
  /** Hash of the totals of the metrics of finished jobs of one type (count, prevTS, prevCount). */
  metrics(type: 'completed' | 'failed'): string;
  /** List of per-minute data points of those metrics, newest first. */
  metricsData(type: 'completed' | 'failed'): string;
  /** Hash of exact outcome counters, `<outcome>:<job name>` -> count (includes/counters.lua). */
  readonly counters: string;
  /** Hash of the job names admitted as metric labels (at most 50). */
  readonly counterNames: string;
  /** Hash of latency histogram bucket counts and sums (recordLatency.lua). */
  readonly histograms: string;
  /** Hash of the scheduler ids admitted as lateness labels (at most 50). */
  readonly schedulerLabels: string;
  /**
   * `hopper migrate --to-bullmq`: sorted set of the jobs taken out of this queue's structures and
   * not yet removed once written to BullMQ (member id, score: order taken).
   */
  readonly exportMoving: string;
  /** Hash: id -> JSON of where a job in exportMoving was taken from (state, score, group). */
  readonly exportInfo: string;
  /** Counter ordering the jobs taken into exportMoving. */
  readonly exportSeq: string;
}

const TAG = /\{[^}]+\}/;

/** Builds the keys of queue `name` under `prefix` (default `hopper`). */
export function queueKeys(prefix: string, name: string): QueueKeys {
  const base = TAG.test(prefix) ? `${prefix}:${name}:` : `${prefix}:{${name}}:`;
  return {
    base,
    meta: `${base}meta`,
    id: `${base}id`,
    wait: `${base}wait`,
    prio: `${base}prio`,
    prioCounter: `${base}pc`,
    delayed: `${base}delayed`,
    active: `${base}active`,
    completed: `${base}completed`,
    failed: `${base}failed`,
    events: `${base}events`,
    marker: `${base}marker`,
    stalledCheck: `${base}stalled-check`,
    limiter: `${base}limiter`,
    workers: `${base}workers`,
    workerInfo: `${base}worker-info`,
    dedup: (id) => `${base}de:${id}`,
    dedupKept: (id) => `${base}dn:${id}`,
    schedulers: `${base}schedulers`,
    schedDue: `${base}sched-due`,
    scheduler: (id) => `${base}s:${id}`,
    cancelChannel: `${base}cancel`,
    requests: (producerId) => `${base}rq:${producerId}`,
    job: (id) => `${base}j:${id}`,
    data: (id) => `${base}d:${id}`,
    logs: (id) => `${base}l:${id}`,
    steps: (id) => `${base}st:${id}`,
    output: (id) => `${base}o:${id}`,
    run: (runId) => `${base}run:${runId}`,
    outputWake: `${base}ow`,
    waitingChildren: `${base}waiting-children`,
    deps: (id) => `${base}dp:${id}`,
    processed: (id) => `${base}pr:${id}`,
    failedChildren: (id) => `${base}fc:${id}`,
    ignoredChildren: (id) => `${base}ig:${id}`,
    cancelChildren: (id) => `${base}cc:${id}`,
    rateWindow: `${base}lw`,
    weightedWindow: `${base}lx`,
    weightedSum: `${base}lxs`,
    budgetWindow: (tenant) => `${base}bu:${tenant}`,
    budgetSum: (tenant) => `${base}bs:${tenant}`,
    eventsReaderName: `hopper:${Buffer.from(base).toString('base64url')}:qe`,
    groupRing: `${base}gr`,
    groupsLimited: `${base}gl`,
    groups: `${base}gs`,
    groupsParked: `${base}gp`,
    groupsIdle: `${base}gz`,
    group: (id) => `${base}g:${id}`,
    groupQueue: (id) => `${base}gq:${id}`,
    groupWindow: (id) => `${base}gw:${id}`,
    metrics: (type) => `${base}metrics:${type}`,
    metricsData: (type) => `${base}metrics:${type}:data`,
    counters: `${base}mc`,
    counterNames: `${base}mn`,
    histograms: `${base}mh`,
    schedulerLabels: `${base}ml`,
    exportMoving: `${base}xm`,
    exportInfo: `${base}xi`,
    exportSeq: `${base}xs`,
  };
}

/** The pattern matching every queue's meta key under `prefix`, and how to read the queue name back. */
export function metaKeyPattern(prefix: string): { pattern: string; nameOf(key: string): string | undefined } {
  const tagged = TAG.test(prefix);
  const escaped = prefix.replace(/[*?[\]\\]/g, (c) => `\\${c}`);
  return {
    pattern: `${escaped}:*:meta`,
    nameOf(key) {
      const middle = key.slice(prefix.length + 1, -':meta'.length);
      if (tagged) return middle.includes(':') ? undefined : middle;
      const m = /^\{([^}]+)\}$/.exec(middle);
      return m ? m[1] : undefined;
    },
  };
}

/**
 * Reads a queue's prefix and name back from a meta key found by a server-wide scan (`*:meta`):
 * `<prefix>:{<name>}:meta`, or `<prefix>:<name>:meta` under a prefix holding a `{tag}`. Undefined
 * for any other key (the caller still checks that the hash is a Hopper queue's).
 */
export function parseMetaKey(key: string): { prefix: string; name: string } | undefined {
  const plain = /^(.+):\{([^{}]+)\}:meta$/.exec(key);
  if (plain && !TAG.test(plain[1])) return { prefix: plain[1], name: plain[2] };
  const tagged = /^(.*\{[^{}]+\}[^:]*):([^:]+):meta$/.exec(key);
  return tagged ? { prefix: tagged[1], name: tagged[2] } : undefined;
}

/** The list holding the dashboard's audit log of a prefix (newest first, trimmed); not a queue key. */
export function auditLogKey(prefix: string): string {
  return `${prefix}:dashboard-audit`;
}

/**
 * Whether queue `other` lives in the same Redis Cluster slot as the queue whose base is `base`:
 * always when the prefix holds the hash tag, never otherwise (each queue name is its own tag).
 */
export function sameSlot(base: string, name: string, other: string): boolean {
  return other === name || !base.endsWith(`{${name}}:`);
}

/** The queue name in a queue's base (`prefix:{name}:` or, under a tagged prefix, `prefix:name:`). */
export function queueNameOfBase(base: string): string {
  const tagged = /\{([^{}]*)\}:$/.exec(base);
  if (tagged) return tagged[1];
  const plain = /([^:]*):$/.exec(base);
  return plain ? plain[1] : base;
}

/** A job's public key (`<prefix>:<queue>:<id>`, job/job-key.ts) from its queue's base, as includes/flow.lua computes it. */
export function publicKeyOf(base: string, id: string): string {
  const tagged = /\{([^{}]*)\}:$/.exec(base);
  if (tagged) return `${base.slice(0, tagged.index)}${tagged[1]}:${id}`;
  return `${base}${id}`;
}
