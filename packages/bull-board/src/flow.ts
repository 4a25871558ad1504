/**
 * Bull Board's flow view (`GET /api/queues/:queue/:job/flow`) on Hopper queues. Bull Board asks the
 * adapter for a "flow producer" and calls its `getFlow({ queueName, id, depth, maxChildren })`,
 * then reads each node's job (`id`, `name`, `progress`, `getState()`, `getDependenciesCount()`,
 * `getIgnoredChildrenFailures()`).
 *
 * This reader answers with a snapshot, read through a Hopper FlowProducer opened for the request
 * and closed before it returns: the adapter holds no connection between requests (Bull Board
 * never closes its adapters, and a connection left open keeps an application's process alive).
 * The read is bounded as Bull Board bounds what it shows: at most `maxChildren` children per
 * parent, `depth` levels, and {@link FLOW_NODES_MAX} nodes in all (or `maxChildren` when only the
 * root's children are asked for); a parent whose children were cut shows as truncated (its counts
 * say how many it has). Every value shown is redacted as the rest of the adapter redacts.
 */
import { FlowProducer, type QueueConnection, type Job } from 'hopper-queue';
import type { Redactor } from 'hopper-queue-dashboard/redaction';

/** Most nodes one flow read returns (Bull Board's own cap on what it shows). */
export const FLOW_NODES_MAX = 200;

/** What Bull Board passes to `getFlow`. */
export interface FlowRequest {
  queueName: string;
  id: string;
  depth?: number;
  maxChildren?: number;
}

/** Counts of a parent's children by outcome. */
interface Counts {
  processed: number;
  unprocessed: number;
  failed: number;
  ignored: number;
}

/** A job of the flow as Bull Board reads it: its fields, and its state and children's counts as read. */
export interface FlowJobSnapshot {
  id: string;
  name: string;
  progress: unknown;
  queueName: string;
  queueQualifiedName: string;
  getState(): Promise<string>;
  getDependenciesCount(): Promise<Counts>;
  getIgnoredChildrenFailures(): Promise<Record<string, string>>;
}

/** A node of the flow tree (BullMQ's `JobNode` shape). */
export interface FlowSnapshot {
  job: FlowJobSnapshot;
  children: FlowSnapshot[];
}

/** What the adapter hands Bull Board as its flow producer. */
export interface FlowReader {
  getFlow(request: FlowRequest): Promise<FlowSnapshot | null>;
}

/** Where the flows are: the queue's connection and key prefix, and how values are shown. */
export interface FlowSource {
  connection: QueueConnection | undefined;
  prefix: string;
  redactor: Redactor;
}

/** A Hopper job's public key `<prefix>:<queue>:<id>` as its queue and id (queue names hold no ':'), or undefined. */
function parseKey(prefix: string, key: string): { queue: string; id: string } | undefined {
  const head = `${prefix}:`;
  if (!key.startsWith(head)) return undefined;
  const rest = key.slice(head.length);
  const colon = rest.indexOf(':');
  if (colon <= 0 || colon === rest.length - 1) return undefined;
  return { queue: rest.slice(0, colon), id: rest.slice(colon + 1) };
}

/** The keys of `job`'s children, at most `max` of them (completed, pending, failed, ignored: in that order). */
async function childKeys(job: Job, max: number): Promise<string[]> {
  const page = { cursor: 0, count: max };
  const deps = await job.getDependencies({ processed: page, unprocessed: page, failed: page, ignored: page });
  const keys = [
    ...new Set([
      ...Object.keys(deps.processed ?? {}),
      ...(deps.unprocessed ?? []),
      ...(deps.failed ?? []),
      ...Object.keys(deps.ignored ?? {}),
    ]),
  ];
  return keys.slice(0, max);
}

/** Reads the snapshot of one job: its state, its children's counts and, if it let some go, their failures. */
async function snapshot(job: Job, redactor: Redactor): Promise<FlowJobSnapshot> {
  const [state, raw] = await Promise.all([job.getState(), job.getDependenciesCount()]);
  const counts: Counts = {
    processed: raw.processed ?? 0,
    unprocessed: raw.unprocessed ?? 0,
    failed: raw.failed ?? 0,
    ignored: raw.ignored ?? 0,
  };
  const ignored: Record<string, string> = {};
  if (counts.ignored > 0)
    for (const [key, reason] of Object.entries(await job.getIgnoredChildrenFailures()))
      ignored[key] = redactor.text(reason, 'failedReason');
  const progress = job.progress;
  return {
    id: job.id ?? '',
    name: job.name,
    progress: typeof progress === 'string' ? redactor.text(progress, 'progress') : redactor.value(progress),
    queueName: job.queueName,
    queueQualifiedName: job.queueQualifiedName,
    getState: () => Promise.resolve(state),
    getDependenciesCount: () => Promise.resolve(counts),
    getIgnoredChildrenFailures: () => Promise.resolve(ignored),
  };
}

/** Reads the flow under job `request.id` of queue `request.queueName`, breadth-first within the bounds above; null if the job is gone. */
async function readFlow(producer: FlowProducer, source: FlowSource, request: FlowRequest): Promise<FlowSnapshot | null> {
  const depth = Math.max(1, Math.floor(request.depth ?? 10));
  const maxChildren = Math.max(1, Math.floor(request.maxChildren ?? 20));
  const budget = depth <= 2 ? Math.max(FLOW_NODES_MAX, maxChildren) : FLOW_NODES_MAX;
  const read = async (queueName: string, id: string): Promise<Job | undefined> =>
    (await producer.getFlow({ queueName, id, depth: 1 }))?.job;

  const rootJob = await read(request.queueName, request.id);
  if (!rootJob) return null;
  const nodes: { job: Job; node: FlowSnapshot }[] = [];
  const visit = (job: Job): FlowSnapshot => {
    const node = { job: undefined as unknown as FlowJobSnapshot, children: [] };
    nodes.push({ job, node });
    return node;
  };
  const root = visit(rootJob);
  let level = [{ job: rootJob, node: root }];
  for (let d = 1; d < depth && level.length > 0 && nodes.length < budget; d++) {
    const next: typeof level = [];
    for (const parent of level) {
      for (const key of await childKeys(parent.job, maxChildren)) {
        if (nodes.length >= budget) break;
        const child = parseKey(source.prefix, key);
        const job = child ? await read(child.queue, child.id) : undefined;
        if (!job) continue; // removed since (removeOnComplete): Bull Board counts it as gone
        const node = visit(job);
        parent.node.children.push(node);
        next.push({ job, node });
      }
    }
    level = next;
  }
  await Promise.all(
    nodes.map(async ({ job, node }) => {
      node.job = await snapshot(job, source.redactor);
    }),
  );
  return root;
}

/** A flow reader over `source`: each `getFlow` opens a FlowProducer, reads, and closes it. */
export function flowReader(source: FlowSource): FlowReader {
  return {
    async getFlow(request) {
      const producer = new FlowProducer({ connection: source.connection, prefix: source.prefix });
      try {
        return await readFlow(producer, source, request);
      } finally {
        await producer.close();
      }
    },
  };
}
