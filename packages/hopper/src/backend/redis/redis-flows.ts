/**
 * Flows in the Redis backend: adding trees of jobs across queues (addFlow.lua), sealing parents
 * added in chunks, moving a parent to waiting-children, and reading a parent's dependency
 * records (see scripts/includes/flow.lua for the layout).
 */
import type {
  AddFlowResult,
  AddRequest,
  ChildDependencyResult,
  ChildFailurePolicy,
  Dependencies,
  Fence,
  FlowNodeWrite,
  FlowOutcome,
  SealParentResult,
  WaitChildrenResult,
} from '../backend.js';
import { asRedisFullError, GroupMaxSizeExceededError } from '../../job/errors.js';
import { RedisQueueReads } from './redis-reads.js';
import { timeArg, toChildDependencyResult, toSealParentResult, toWaitChildrenResult, type Reply } from './replies.js';
import { runScript } from './script-runner.js';
import { SCRIPTS } from './scripts.generated.js';

const FLOW_OUTCOMES: FlowOutcome[] = ['added', 'duplicated', 'skipped'];

/** A child's failure policy as the parent link stores it (includes/flow.lua). */
const POLICY_LETTERS: Readonly<Record<ChildFailurePolicy, string>> = { none: '', fail: 'f', continue: 'c', ignore: 'i', remove: 'r' };

export abstract class RedisQueueFlows extends RedisQueueReads {
  async addFlow(nodes: FlowNodeWrite[], request: AddRequest | undefined, now?: number): Promise<AddFlowResult> {
    const k = this.keys;
    const rest: (string | number)[] = [];
    for (const node of nodes) {
      rest.push(
        node.queue,
        node.name,
        node.data,
        node.opts,
        node.customId,
        node.priority,
        node.delay,
        node.lifo ? 1 : 0,
        node.timestamp,
        node.parentIndex,
        node.parent?.queue ?? '',
        node.parent?.id ?? '',
        POLICY_LETTERS[node.policy],
        node.sealed ? 1 : 0,
      );
    }
    const reply = (await runScript(
      this.client,
      SCRIPTS.addFlow,
      { meta: k.meta, requests: k.requests(request?.producerId ?? '-') },
      { now: timeArg(now), base: k.base, queueName: this.queueName, seq: request ? request.seq : '', keep: request ? request.keep : 0 },
      rest,
    ).catch((err: unknown) => {
      // A full Redis (noeviction) refuses the add before writing anything: a typed refusal.
      throw asRedisFullError(err, `the add of a flow of ${nodes.length} jobs (queue "${this.queueName}")`);
    })) as Reply;
    const at = Number(reply[0]);
    if (reply[1] === 'exists') return { now: at, ok: false, reason: 'exists', index: Number(reply[2]) - 1 };
    if (reply[1] === 'parent') return { now: at, ok: false, reason: 'parent', index: Number(reply[2]) - 1, state: String(reply[3]) };
    if (reply[1] === 'maxsize') throw GroupMaxSizeExceededError.of(String(reply[2]), String(reply[3]), Number(reply[4]), Number(reply[5]));
    const ids: string[] = [];
    const outcomes: FlowOutcome[] = [];
    for (let i = 2; i < reply.length; i += 2) {
      ids.push(String(reply[i]));
      outcomes.push(FLOW_OUTCOMES[Number(reply[i + 1])]);
    }
    return { now: at, ok: true, ids, outcomes };
  }

  async sealParent(id: string, now?: number): Promise<SealParentResult> {
    return toSealParentResult(
      await runScript(this.client, SCRIPTS.sealParent, { meta: this.keys.meta }, { now: timeArg(now), base: this.keys.base, id }),
    );
  }

  async moveToWaitingChildren(id: string, fence: Fence, now?: number): Promise<WaitChildrenResult> {
    const k = this.keys;
    const reply = (await runScript(
      this.client,
      SCRIPTS.moveToWaitingChildren,
      { meta: k.meta, active: k.active, waitingChildren: k.waitingChildren, events: k.events },
      { now: timeArg(now), base: k.base, id, token: fence.token, attempt: fence.attempt },
    )) as [number, string];
    return toWaitChildrenResult(reply);
  }

  async removeChildDependency(id: string, now?: number): Promise<ChildDependencyResult> {
    const k = this.keys;
    return toChildDependencyResult(
      await runScript(
        this.client,
        SCRIPTS.removeChildDependency,
        { job: k.job(id), events: k.events },
        { now: timeArg(now), base: k.base, id },
      ),
    );
  }

  async takeChildrenToCancel(id: string, count: number): Promise<string[]> {
    return (await this.client.spop(this.keys.cancelChildren(id), count)) ?? [];
  }

  async getDependencies(id: string): Promise<Dependencies> {
    const k = this.keys;
    const [[, processed], [, unprocessed], [, failed], [, ignored]] = (await this.client
      .pipeline()
      .hgetall(k.processed(id))
      .smembers(k.deps(id))
      .hgetall(k.failedChildren(id))
      .hgetall(k.ignoredChildren(id))
      .exec()) as [
      [unknown, Record<string, string>],
      [unknown, string[]],
      [unknown, Record<string, string>],
      [unknown, Record<string, string>],
    ];
    return { processed, unprocessed, failed, ignored };
  }

  async getDependencyPage(
    id: string,
    kind: keyof Dependencies,
    cursor: string,
    count: number,
  ): Promise<{ cursor: string; items: [string, string][] }> {
    const k = this.keys;
    if (kind === 'unprocessed') {
      const [next, members] = await this.client.sscan(k.deps(id), cursor, 'COUNT', count);
      return { cursor: next, items: members.map((m): [string, string] => [m, '']) };
    }
    const key = kind === 'processed' ? k.processed(id) : kind === 'ignored' ? k.ignoredChildren(id) : k.failedChildren(id);
    const [next, flat] = await this.client.hscan(key, cursor, 'COUNT', count);
    const items: [string, string][] = [];
    for (let i = 0; i < flat.length; i += 2) items.push([flat[i], flat[i + 1]]);
    return { cursor: next, items };
  }

  async getDependencyCounts(id: string): Promise<{ processed: number; unprocessed: number; failed: number; ignored: number }> {
    const k = this.keys;
    const replies = (await this.client
      .pipeline()
      .hlen(k.processed(id))
      .scard(k.deps(id))
      .hlen(k.failedChildren(id))
      .hlen(k.ignoredChildren(id))
      .exec()) as [unknown, number][];
    const [processed, unprocessed, failed, ignored] = replies.map(([, n]) => Number(n));
    return { processed, unprocessed, failed, ignored };
  }
}
