/**
 * Reads which BullMQ layout a queue is stored in, from its meta hash (`version`: `bullmq:5.x.y`
 * or `bullmq:6.x.y`) and the types of its keys, and refuses what it cannot read. BullMQ 5 keeps a
 * paused queue's waiting jobs in a `paused` list; 6 keeps them in `wait` (and resumes a 5-era
 * `paused` list into it); 5 has legacy repeatable jobs, 6 only job schedulers. A queue that only a
 * FlowProducer or a `skipMetasUpdate` producer wrote has no version: its key types decide.
 */
import type { RedisClient } from '../backend/redis/connection.js';
import { MigrationError } from '../job/errors.js';
import type { BullKeys } from './bullmq-keys.js';

/** What the migration found about a BullMQ queue. */
export interface BullLayout {
  /** The layout's major version. */
  version: 5 | 6;
  /** The meta's `version` field as stored, if any (`bullmq:6.7.0`). */
  recorded: string | undefined;
  /** Whether the queue is paused (meta `paused`). */
  paused: boolean;
}

type StructureName =
  'wait' | 'paused' | 'active' | 'prioritized' | 'delayed' | 'completed' | 'failed' | 'waitingChildren' | 'marker' | 'repeat';

const EXPECTED_TYPES: [StructureName, string][] = [
  ['wait', 'list'],
  ['paused', 'list'],
  ['active', 'list'],
  ['prioritized', 'zset'],
  ['delayed', 'zset'],
  ['completed', 'zset'],
  ['failed', 'zset'],
  ['waitingChildren', 'zset'],
  ['marker', 'zset'],
  ['repeat', 'zset'],
];

/** Detects the layout of queue `k`; throws MigrationError ('no-queue', 'unknown-layout'). */
export async function detectLayout(client: RedisClient, k: BullKeys): Promise<BullLayout> {
  const pipeline = client.pipeline();
  pipeline.hgetall(k.meta);
  for (const [name] of EXPECTED_TYPES) pipeline.type(k[name]);
  const replies = (await pipeline.exec()) ?? [];
  const meta = (replies[0]?.[1] ?? {}) as Record<string, string>;
  const types = replies.slice(1).map((r) => String(r[1]));
  const where = `BullMQ queue "${k.queue}" under prefix "${k.prefix}"`;
  if (Object.keys(meta).length === 0 && types.every((t) => t === 'none')) {
    throw new MigrationError(
      'no-queue',
      `${where} does not exist (no ${k.meta}, no jobs). Check --queue and --prefix (BullMQ's default prefix is "bull").`,
    );
  }
  for (let i = 0; i < EXPECTED_TYPES.length; i++) {
    const [name, expected] = EXPECTED_TYPES[i];
    if (types[i] !== 'none' && types[i] !== expected) {
      throw new MigrationError(
        'unknown-layout',
        `${where} is not in a layout hopper migrate can read: ${k[name]} is a ${types[i]}, BullMQ 5 and 6 store a ${expected} there` +
          (name === 'marker' ? ' (a BullMQ 4 or older queue: upgrade its BullMQ to 5 first, or drain it)' : '') +
          '. Nothing was changed.',
      );
    }
  }
  const recorded = meta.version;
  let version: 5 | 6;
  if (recorded === undefined) {
    version = types[1] === 'list' ? 5 : 6;
  } else {
    const m = /^bullmq:(\d+)\.\d+\.\d+/.exec(recorded);
    const major = m ? Number(m[1]) : NaN;
    if (major !== 5 && major !== 6) {
      throw new MigrationError(
        'unknown-layout',
        `${where} records version "${recorded}" in ${k.meta}; hopper migrate reads the layouts of BullMQ 5.x and 6.x ` +
          '(upgrade the queue with BullMQ 5 or 6 first, or drain it). Nothing was changed.',
      );
    }
    version = major;
  }
  return { version, recorded, paused: meta.paused !== undefined };
}
