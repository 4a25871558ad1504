/**
 * FlowProducer: adds trees of jobs across queues (BullMQ's API). A parent waits in
 * waiting-children until its children are done, then moves to waiting (or delayed, by its own
 * delay); its processor reads their results with `job.getChildrenValues()`.
 *
 * A tree of up to 1,000 jobs is written in one atomic call. A larger one is written in chunks of
 * at most 1,000: each parent is added first, unsealed, then its children batch by batch, then it
 * is sealed: it cannot start before every child exists. With jobIds on the nodes, adding the same
 * flow again creates nothing new (and resumes a chunked add that was cut short).
 *
 * @example
 * const flows = new FlowProducer({ connection });
 * await flows.add({
 *   name: 'report', queueName: 'reports', data: { month: '2026-11' },
 *   children: [
 *     { name: 'sales', queueName: 'etl', data: { table: 'sales' } },
 *     { name: 'refunds', queueName: 'etl', data: { table: 'refunds' } },
 *   ],
 * });
 */
import { EventEmitter } from 'node:events';
import { randomBytes } from 'node:crypto';
import type { AddRequest, FlowNodeWrite, QueueBackend } from '../backend/backend.js';
import { createBackend, type QueueConnection } from '../backend/create.js';
import { systemClock, type Clock } from '../clock/clock.js';
import { ClosedError, InvalidOptionsError } from '../job/errors.js';
import { Job, type JobContext } from '../job/job.js';
import { parseJobKey } from '../job/job-key.js';
import { MAX_JOB_ID_LENGTH, validateJobOptions, type JobsOptions } from '../job/options.js';
import { checkServer, CLOSE_GRACE_MS, DEFAULT_PREFIX } from './queue-base.js';
import { Starter } from './starter.js';
import { sleep } from '../clock/timers.js';
import { checkFlowSlots, explainRefusal, FLOW_CHUNK, resolveParent, toFlowNode } from './flows.js';
import { toNewJob } from '../job/new-job.js';
import { SpanKind, TelemetryAttributes, type Telemetry } from '../telemetry/telemetry.js';
import { trace } from '../telemetry/trace.js';
import { validateComponentOptions } from '../validation/component-options.js';
import { checkArgument, checkFlowIds, checkFlowOpts, FLOW_NODE, NODE_OPTIONS } from '../validation/arguments.js';
import { checkDeadLetterRoute } from '../job/dead-letter-route.js';

/** Options of a FlowProducer. */
export interface FlowProducerOptions {
  /**
   * A name for this producer, kept as `opts.name` (as @nestjs/bullmq's `registerFlowProducer({ name })`
   * sets it, to find a producer by name); it changes nothing else.
   */
  name?: string;
  /** How to reach Redis (ioredis options, a URL, or an ioredis instance you keep ownership of). */
  connection?: QueueConnection;
  /** Key prefix of every queue of the flows (default `hopper`); a `{tag}` in it puts them in one Redis Cluster slot. */
  prefix?: string;
  /** The clock deciding due times (tests pass a FakeClock). */
  clock?: Clock;
  /**
   * A telemetry adapter (BullMQ's interface; `bullmq-otel` works): each add is a producer span
   * (`addFlow <queue>`, `addBulkFlows`) whose context travels with every job of the flow.
   */
  telemetry?: Telemetry;
  /** Accepted for BullMQ compatibility: Hopper checks the server once at start (Redis 7+ is required). */
  skipVersionCheck?: boolean;
  /** Accepted for BullMQ compatibility: Hopper's commands wait for the connection they need. */
  skipWaitingForReady?: boolean;
  /** Accepted for BullMQ compatibility: a FlowProducer needs no blocking connection. */
  blockingConnection?: boolean;
}

/** A job of a flow and its children (BullMQ's `FlowJob`). */
export interface FlowJob {
  name: string;
  queueName: string;
  data?: unknown;
  /** Must be the FlowProducer's prefix when given (parents and children share one prefix). */
  prefix?: string;
  /** Job options; on the root, `parent` attaches the whole flow under an existing job. */
  opts?: JobsOptions;
  children?: FlowChildJob[];
}

/** A child in a flow: a FlowJob whose parent is its place in the tree. */
export type FlowChildJob = Omit<FlowJob, 'opts'> & { opts?: Omit<JobsOptions, 'parent'> };

/** A job of an added or read flow and its children (BullMQ's `JobNode`). */
export interface JobNode {
  job: Job;
  children?: JobNode[];
}

/** Per-queue defaults for `add` (BullMQ's `FlowOpts`). */
export interface FlowOpts {
  queuesOptions?: Record<string, { defaultJobOptions?: JobsOptions }>;
}

/** What `getFlow` reads (BullMQ's `NodeOpts`). */
export interface NodeOpts {
  queueName: string;
  id: string;
  prefix?: string;
  /** Levels to read, the job's own included (as in BullMQ): 1 reads the job alone, 2 its children too. Default 10. */
  depth?: number;
  /** Most children read per parent. Default: all. */
  maxChildren?: number;
}

/** A validated node of a tree being added; `id` and `outcome` are filled in by the add. */
interface Flat {
  queue: string;
  name: string;
  data: unknown;
  opts: JobsOptions;
  children: Flat[];
  size: number;
  id?: string;
  outcome?: 'added' | 'duplicated' | 'skipped';
  /** The server time of the add. */
  addedAt?: number;
}

export class FlowProducer extends EventEmitter {
  /** The options this producer was created with. */
  readonly opts: FlowProducerOptions;
  /** The key prefix of the flows' queues. */
  readonly prefix: string;
  private readonly clock: Clock;
  private readonly primary: QueueBackend;
  private readonly backends = new Map<string, QueueBackend>();
  private readonly contexts = new Map<string, JobContext>();
  /** The start: connect and check the server, tried again until it succeeds (api/starter.ts). */
  private readonly starter: Starter;
  private readonly producerId = randomBytes(6).toString('base64url');
  private seq = 0;
  private closed = false;

  constructor(opts: FlowProducerOptions = {}) {
    super();
    // Every option is checked before connecting: a refused option leaves nothing running.
    validateComponentOptions('FlowProducer', undefined, opts);
    this.opts = opts;
    this.prefix = opts.prefix ?? DEFAULT_PREFIX;
    this.clock = opts.clock ?? systemClock;
    // The connection's backend: each queue gets a sibling on the same connection.
    this.primary = createBackend({
      connection: opts.connection,
      prefix: this.prefix,
      queueName: 'flow-producer',
      role: 'command',
      onConnectionError: (err) => {
        if (!this.closed) this.emitError(err);
      },
    });
    const primary = this.primary;
    this.starter = new Starter({
      attempt: async () => checkServer(await primary.connect()),
      timeoutMs: () => primary.startTimeoutMs,
      timeoutError: (ms) => primary.timeoutError('FlowProducer starting', ms),
      unavailable: () => primary.unavailable(),
      what: 'FlowProducer',
      onError: (err) => {
        if (!this.closed) this.emitError(err);
      },
    });
    this.starter.begin();
  }

  /**
   * Resolves once connected and the server checked. Rejects within the start bound (Redis: the
   * connection's `connectTimeout`, default 10 s) with a typed error if the server does not answer;
   * the FlowProducer keeps trying, and a later call waits again.
   */
  async waitUntilReady(): Promise<void> {
    await this.ready();
  }

  private ready(): Promise<void> {
    if (this.closed) return Promise.reject(new ClosedError('This FlowProducer is closed.'));
    return this.starter.ready();
  }

  private backendFor(queue: string): QueueBackend {
    let backend = this.backends.get(queue);
    if (!backend) {
      backend = this.primary.sibling(queue);
      this.backends.set(queue, backend);
    }
    return backend;
  }

  private contextFor(queue: string): JobContext {
    let ctx = this.contexts.get(queue);
    if (!ctx) {
      ctx = { backend: this.backendFor(queue), queueName: queue, prefix: this.prefix, ready: () => this.ready(), clock: this.clock };
      this.contexts.set(queue, ctx);
    }
    return ctx;
  }

  /**
   * Adds a flow: the root job and its children, across queues, atomically up to 1,000 jobs (in
   * sealed chunks beyond). Returns the tree of added jobs; for a flow whose root jobId exists,
   * nothing is added and the existing flow is returned.
   */
  async add(flow: FlowJob, opts: FlowOpts = {}): Promise<JobNode> {
    const telemetry = this.opts.telemetry;
    if (!telemetry) return this.addFlow(flow, opts);
    const queue = typeof flow === 'object' && flow !== null ? String(flow.queueName) : '';
    return trace(
      telemetry,
      SpanKind.PRODUCER,
      queue,
      'addFlow',
      queue,
      async (span, metadata) => {
        span?.setAttributes({ [TelemetryAttributes.FlowName]: flow?.name });
        return this.addFlow(withFlowContext(flow, metadata), opts);
      },
      { propagate: true },
    );
  }

  private async addFlow(flow: FlowJob, opts: FlowOpts): Promise<JobNode> {
    // Every node and the per-queue defaults are checked here, before anything is written.
    checkFlowOpts(opts);
    const root = this.flatten(flow, opts, true);
    checkFlowIds(root);
    await this.ready();
    checkFlowSlots(this.backendFor(root.queue), queuesOf(root));
    this.checkDeadLetters(root);
    // A tree added in chunks can be resumed (run again after being cut short) only if each child
    // is found again: children without an id get one derived from their parent's and their place.
    if (root.size > FLOW_CHUNK && root.opts.jobId) assignResumableIds(root, root.opts.jobId);
    const ext = root.opts.parent ? resolveParent(this.prefix, root.opts.parent) : undefined;
    if (isDeduplicatedJob(root)) await this.addDeduplicated([root]);
    else if (root.size <= FLOW_CHUNK) await this.addGroup([root], ext);
    else await this.addLarge(root, ext);
    return this.result(root);
  }

  /**
   * Adds several flows. Up to 1,000 jobs in all, they are written in one atomic call (all or
   * nothing); larger sets are added flow by flow.
   */
  async addBulk(flows: FlowJob[]): Promise<JobNode[]> {
    const telemetry = this.opts.telemetry;
    if (!telemetry) return this.addFlows(flows);
    return trace(
      telemetry,
      SpanKind.PRODUCER,
      '',
      'addBulkFlows',
      '',
      async (span, metadata) => {
        if (Array.isArray(flows)) {
          span?.setAttributes({
            [TelemetryAttributes.BulkNames]: flows.map((flow) => flow?.name).join(','),
            [TelemetryAttributes.BulkCount]: flows.length,
          });
        }
        return this.addFlows(Array.isArray(flows) ? flows.map((flow) => withFlowContext(flow, metadata)) : flows);
      },
      { propagate: true },
    );
  }

  private async addFlows(flows: FlowJob[]): Promise<JobNode[]> {
    if (!Array.isArray(flows))
      throw new InvalidOptionsError('addBulk takes an array of flows ({ name, queueName, data, opts, children }).');
    const roots = flows.map((flow) => this.flatten(flow, {}, true));
    roots.forEach((root, i) => checkFlowIds(root, `addBulk(flows)[${i}]`));
    if (roots.length === 0) return [];
    await this.ready();
    const total = roots.reduce((sum, r) => sum + r.size, 0);
    if (total > FLOW_CHUNK) return Promise.all(flows.map((flow) => this.addFlow(flow, {})));
    checkFlowSlots(
      this.backendFor(roots[0].queue),
      roots.flatMap((r) => [...queuesOf(r)]),
    );
    for (const root of roots) this.checkDeadLetters(root);
    // Single jobs with deduplication are plain adds (one call per queue, after the flows).
    const trees = roots.filter((root) => !isDeduplicatedJob(root));
    if (trees.length > 0) await this.addGroup(trees, undefined);
    const single = roots.filter(isDeduplicatedJob);
    for (const queue of new Set(single.map((root) => root.queue)))
      await this.addDeduplicated(single.filter((root) => root.queue === queue));
    return Promise.all(roots.map((root) => this.result(root)));
  }

  /**
   * Reads a flow: the job `id` of `queueName` and its children (by their parent records),
   * `depth` levels counting the job's own (default 10; as in BullMQ, 1 reads the job alone), at
   * most `maxChildren` per parent. Undefined if the job is gone.
   */
  async getFlow(opts: NodeOpts): Promise<JobNode | undefined> {
    checkArgument(NODE_OPTIONS, opts, 'getFlow(opts)');
    if (opts.prefix !== undefined && opts.prefix !== this.prefix) {
      throw new InvalidOptionsError(
        `getFlow: prefix "${opts.prefix}" differs from this FlowProducer's "${this.prefix}": use a FlowProducer with that prefix.`,
      );
    }
    await this.ready();
    return this.readNode(opts.queueName, opts.id, opts.depth ?? 10, opts.maxChildren);
  }

  private async readNode(queue: string, id: string, depth: number, maxChildren: number | undefined): Promise<JobNode | undefined> {
    const job = await Job.fromId(this.contextFor(queue), id);
    if (!job) return undefined;
    if (depth <= 1) return { job };
    const deps = await this.backendFor(queue).getDependencies(id);
    let keys = [
      ...new Set([...Object.keys(deps.processed), ...deps.unprocessed, ...Object.keys(deps.failed), ...Object.keys(deps.ignored)]),
    ];
    if (keys.length === 0) return { job };
    if (maxChildren !== undefined) keys = keys.slice(0, maxChildren);
    const children = await Promise.all(
      keys.map((key) => {
        const child = parseJobKey(this.prefix, key);
        return child ? this.readNode(child.queue, child.id, depth - 1, maxChildren) : Promise.resolve(undefined);
      }),
    );
    return { job, children: children.filter((c): c is JobNode => c !== undefined) };
  }

  /** Closes the connection (unless it was passed in as an ioredis instance). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.starter.stop();
    // Within CLOSE_GRACE_MS, whatever the server does.
    await Promise.race([this.primary.close().catch(() => undefined), sleep(CLOSE_GRACE_MS, { ref: false })]);
    this.primary.disconnect();
  }

  /** Drops the connection at once. */
  async disconnect(): Promise<void> {
    this.closed = true;
    this.starter.stop();
    this.primary.disconnect();
  }

  /** Every node's dead-letter queue must be reachable from its own queue (before anything is written). */
  private checkDeadLetters(node: Flat): void {
    checkDeadLetterRoute(this.backendFor(node.queue), node.opts.deadLetter?.queue);
    for (const child of node.children) this.checkDeadLetters(child);
  }

  private flatten(flow: FlowJob, opts: FlowOpts, isRoot: boolean, path = 'flow'): Flat {
    checkArgument(FLOW_NODE, flow, path);
    if (flow.prefix !== undefined && flow.prefix !== this.prefix) {
      throw new InvalidOptionsError(
        `Job "${flow.name}" has prefix "${flow.prefix}" but the FlowProducer's is "${this.prefix}": every job of a flow lives under one prefix.`,
      );
    }
    validateJobOptions(flow.opts, [], `${path}.opts`);
    if (!isRoot && flow.opts?.parent) {
      throw new InvalidOptionsError(
        `Child "${flow.name}" sets opts.parent: a child's parent is its place in the tree; only the root may join an existing job.`,
      );
    }
    const defaults = opts.queuesOptions?.[flow.queueName]?.defaultJobOptions;
    const merged = defaults ? { ...defaults, ...flow.opts } : { ...flow.opts };
    if (flow.children !== undefined && !Array.isArray(flow.children)) {
      throw new InvalidOptionsError(`children of "${flow.name}" must be an array of flow nodes.`);
    }
    if (merged.deduplication && (flow.children ?? []).length > 0) {
      throw new InvalidOptionsError(
        `Deduplication options cannot be used on flow nodes with children: job "${flow.name}" has children. ` +
          'Deduplicate the flow by giving its root a jobId instead (adding the same flow again then creates nothing).',
      );
    }
    const children = (flow.children ?? []).map((child, i) => this.flatten(child, opts, false, `${path}.children[${i}]`));
    const size = 1 + children.reduce((sum, c) => sum + c.size, 0);
    return { queue: flow.queueName, name: flow.name, data: flow.data ?? {}, opts: merged, children, size };
  }

  private request(): AddRequest {
    return { producerId: this.producerId, seq: ++this.seq, keep: 64 };
  }

  /** Writes whole small trees (with `withChildren`) in one atomic call. */
  private async addGroup(roots: Flat[], ext: { queue: string; id: string } | undefined, withChildren = true): Promise<void> {
    const nodes: FlowNodeWrite[] = [];
    const order: Flat[] = [];
    const visit = (flat: Flat, parentIndex: number): void => {
      const sealed = withChildren || flat.children.length === 0;
      const node = toFlowNode(this.prefix, flat.queue, flat.name, flat.data, flat.opts, parentIndex, sealed);
      if (parentIndex === 0 && ext) node.parent = ext;
      nodes.push(node);
      order.push(flat);
      const index = nodes.length;
      if (withChildren) for (const child of flat.children) visit(child, index);
    };
    for (const root of roots) visit(root, 0);
    const result = await this.backendFor(roots[0].queue).addFlow(nodes, this.request(), this.clock.backendNow());
    explainRefusal(result, nodes, this.prefix);
    if (!result.ok) return;
    order.forEach((flat, i) => {
      flat.id = result.ids[i];
      flat.outcome = result.outcomes[i];
      flat.addedAt = result.now;
    });
  }

  /**
   * Adds single jobs (no children, no parent) with deduplication, all of one queue, as the queue
   * adds them: a deduplicated one returns the job holding its deduplication id.
   */
  private async addDeduplicated(roots: Flat[]): Promise<void> {
    const jobs = roots.map((root) => toNewJob(root.name, root.data, root.opts));
    const result = await this.backendFor(roots[0].queue).addJobs(jobs, this.request(), this.clock.backendNow());
    roots.forEach((root, i) => {
      root.id = result.ids[i];
      root.outcome = result.outcomes[i] === 'added' ? 'added' : 'duplicated';
      root.addedAt = result.now;
    });
  }

  /** Writes a tree larger than one call: the parent unsealed, its children in chunks, then the seal. */
  private async addLarge(flat: Flat, ext: { queue: string; id: string } | undefined): Promise<void> {
    await this.addGroup([flat], ext, false);
    const id = flat.id as string;
    if (flat.outcome === 'duplicated') {
      // An existing parent: a complete flow (nothing to do), or a chunked add cut short (resume it).
      const record = await this.backendFor(flat.queue).getJob(id);
      if (!record?.awaitingSeal) return;
    }
    const self = { queue: flat.queue, id };
    let batch: Flat[] = [];
    let size = 0;
    const flush = async (): Promise<void> => {
      if (batch.length > 0) await this.addGroup(batch, self);
      batch = [];
      size = 0;
    };
    for (const child of flat.children) {
      if (child.size > FLOW_CHUNK) {
        await flush();
        await this.addLarge(child, self);
        continue;
      }
      if (size + child.size > FLOW_CHUNK) await flush();
      batch.push(child);
      size += child.size;
    }
    await flush();
    await this.backendFor(flat.queue).sealParent(id, this.clock.backendNow());
  }

  /** The JobNode of an added tree; an existing root's flow is read back instead. */
  private async result(root: Flat): Promise<JobNode> {
    if (root.outcome === 'duplicated') {
      const existing = await this.getFlow({ queueName: root.queue, id: root.id as string });
      if (existing) return existing;
    }
    return this.build(root, undefined);
  }

  private build(flat: Flat, parent: Flat | undefined): JobNode {
    const job = new Job(this.contextFor(flat.queue), flat.name, flat.data, flat.opts, flat.id);
    job.timestamp = flat.opts.timestamp ?? flat.addedAt ?? 0;
    if (parent?.id !== undefined) job.setParent({ queue: parent.queue, id: parent.id });
    else if (flat.opts.parent) job.setParent(resolveParent(this.prefix, flat.opts.parent));
    if (flat.children.length === 0) return { job };
    return { job, children: flat.children.map((child) => this.build(child, flat)) };
  }

  private emitError(err: unknown): void {
    if (this.listenerCount('error') > 0) this.emit('error', err);
    else console.error('[hopper] FlowProducer:', err);
  }
}

/**
 * Gives every descendant of `node` (id `id`) without a jobId of its own the id `<parent id>.<index>`
 * (its place among its parent's children), so running a cut-short chunked add again finds the
 * children already written instead of adding them twice. Ids that would grow past the length
 * limit are left automatic.
 */
function assignResumableIds(node: Flat, id: string): void {
  node.children.forEach((child, i) => {
    let childId = child.opts.jobId;
    if (!childId) {
      const derived = `${id}.${i}`;
      if (derived.length <= MAX_JOB_ID_LENGTH) {
        child.opts = { ...child.opts, jobId: derived };
        childId = derived;
      }
    }
    if (childId !== undefined) assignResumableIds(child, childId);
  });
}

/** A flow of one job with deduplication (no children, no parent): added as the queue adds jobs. */
function isDeduplicatedJob(root: Flat): boolean {
  return root.children.length === 0 && !root.opts.parent && root.opts.deduplication !== undefined;
}

/** Every queue of a tree. */
function queuesOf(root: Flat): Set<string> {
  const queues = new Set<string>();
  const visit = (flat: Flat): void => {
    queues.add(flat.queue);
    flat.children.forEach(visit);
  };
  visit(root);
  return queues;
}

/**
 * A flow whose every job carries the producer's serialised context (`opts.telemetry.metadata`),
 * except jobs that opt out (`omitContext`) or bring their own. Malformed nodes are left for
 * validation to report.
 */
function withFlowContext<T extends FlowJob | FlowChildJob>(flow: T, metadata: string | undefined): T {
  if (metadata === undefined || typeof flow !== 'object' || flow === null) return flow;
  const tm = flow.opts?.telemetry;
  const opts = tm?.omitContext || tm?.metadata !== undefined ? flow.opts : { ...flow.opts, telemetry: { ...tm, metadata } };
  const children = Array.isArray(flow.children) ? flow.children.map((child) => withFlowContext(child, metadata)) : flow.children;
  return { ...flow, opts, children };
}
