/**
 * Key layout 2 (includes/base.lua removedKeys): a job that may have keys besides its hash (large
 * data, logs, steps, output, a parent's dependency records) carries the mark `sx`, set by every
 * script that creates one, and a job without it is deleted with its hash alone instead of nine
 * keys. Checked here: every kind of side key is still deleted with its job (removed at once, and
 * trimmed by a count retention), a job without the mark in a layout-2 queue costs one key, and a
 * queue created by an earlier version (layout 1: its jobs carry no mark) keeps deleting every key.
 */
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { FlowProducer, type Job } from '../../src/index.js';
import { queueKeys } from '../../src/backend/redis/keys.js';
import { useHopper } from '../helpers/hopper.js';
import { once } from '../helpers/wait.js';

const env = useHopper();
let client: Redis;

/** Opens this test's direct connection (closed after it); returns a new queue name and its key base. */
function connect(): { name: string; base: string } {
  const c = new Redis(env.url);
  env.track({ close: async () => void c.disconnect() });
  client = c;
  const name = env.queueName();
  return { name, base: queueKeys(env.prefix, name).base };
}

/** Runs a worker on queue `name` until its first completion. */
async function completeOne(name: string): Promise<void> {
  const worker = env.track(env.worker(name, async () => 'ok', { autorun: false }));
  const completed = once(worker, 'completed');
  void worker.run();
  await completed;
}

/** Every key of the queue's jobs (hash, data, logs, steps, dependency records, output), sorted. */
async function jobSideKeys(base: string): Promise<string[]> {
  const found: string[] = [];
  let cursor = '0';
  do {
    const [next, keys] = await client.scan(cursor, 'MATCH', `${base}*`, 'COUNT', 1000);
    cursor = next;
    for (const key of keys) {
      if (/:(j|d|l|st|dp|pr|fc|ig|o):/.test(key.slice(base.length - 1))) found.push(key.slice(base.length));
    }
  } while (cursor !== '0');
  return found.sort();
}

describe('side keys of a job', () => {
  it('are all deleted with a job removed on completion, whatever it wrote', async () => {
    const { name, base } = connect();
    const queue = env.queue(name);
    const big = 'x'.repeat(5_000);
    await queue.add('plain', {}, { jobId: 'plain', removeOnComplete: true });
    await queue.add('big', { big }, { jobId: 'big', removeOnComplete: true });
    await queue.add('logs', {}, { jobId: 'logs', removeOnComplete: true });
    await queue.add('steps', {}, { jobId: 'steps', removeOnComplete: true });
    await queue.add('output', {}, { jobId: 'output', removeOnComplete: true });
    const flows = env.track(new FlowProducer({ connection: env.url, prefix: env.prefix }));
    await flows.add({
      name: 'parent',
      queueName: name,
      opts: { jobId: 'parent', removeOnComplete: true },
      children: [{ name: 'plain', queueName: name, data: {}, opts: { jobId: 'child', removeOnComplete: true } }],
    });
    expect(await client.hget(`${base}meta`, 'v')).toBe('2');
    const done = new Set<string>();
    const all = ['plain', 'big', 'logs', 'steps', 'output', 'child', 'parent'];
    const finished = once(
      env.track(
        env.worker(name, async (job: Job) => {
          if (job.name === 'logs') await job.log('a line');
          if (job.name === 'steps') await job.step('s', () => 1);
          if (job.name === 'output') {
            await job.stream.write('token');
            await job.stream.end();
          }
          // Before completing: the job's side keys exist.
          if (job.name === 'big') expect(await client.exists(`${base}d:big`)).toBe(1);
          return 'ok';
        }),
      ),
      'completed',
      (job: Job) => {
        done.add(job.id!);
        return all.every((id) => done.has(id));
      },
    );
    await finished;
    expect(await jobSideKeys(base)).toEqual([]);
  });

  it('are deleted with a job trimmed by a count retention', async () => {
    const { name, base } = connect();
    const queue = env.queue(name);
    // Ids that sort in finishing order: two jobs finished in the same ms are trimmed by id.
    await queue.add('logs', {}, { jobId: 'a-old', removeOnComplete: { count: 1 } });
    await queue.add('plain', {}, { jobId: 'b-new', removeOnComplete: { count: 1 } });
    let seen = 0;
    const finished = once(
      env.track(
        env.worker(
          name,
          async (job: Job) => {
            if (job.name === 'logs') {
              await job.log('a line');
              await job.step('s', () => 1);
            }
            return 'ok';
          },
          { concurrency: 1 },
        ),
      ),
      'completed',
      () => ++seen === 2,
    );
    await finished;
    // `a-old` was trimmed when `b-new` finished: its hash, logs and steps are gone.
    expect(await jobSideKeys(base)).toEqual(['j:b-new']);
  });

  it('travel, marked, with a dead letter and its replay, and are deleted with them', async () => {
    const { name, base } = connect();
    const dlqName = env.queueName('dlq');
    const dbase = queueKeys(env.prefix, dlqName).base;
    const queue = env.queue(name, { deadLetter: { queue: dlqName } });
    const dlq = env.queue(dlqName);
    await queue.add('charge', {}, { jobId: 'o1', attempts: 1, removeOnComplete: true, removeOnFail: true });
    let fail = true;
    const worker = env.track(
      env.worker(name, async (job: Job) => {
        await job.step('charged', () => 1);
        if (fail) throw new Error('downstream down');
        return 'ok';
      }),
    );
    await once(worker, 'failed');
    // The dead letter carries the recorded step, and says so.
    const [letter] = await dlq.getWaiting();
    expect(await client.hget(`${dbase}j:${letter.id}`, 'sx')).toBe('1');
    expect(await client.hlen(`${dbase}st:${letter.id}`)).toBe(1);
    fail = false;
    const completed = once(worker, 'completed');
    await letter.replay();
    await completed;
    // The replayed job (its step back with it) completed and was removed with every key.
    expect(await jobSideKeys(base)).toEqual([]);
    expect(await jobSideKeys(dbase)).toEqual([]);
  });

  it('in a layout-2 queue, a job without the mark is deleted with its hash alone', async () => {
    const { name, base } = connect();
    const queue = env.queue(name);
    await queue.add('plain', {}, { jobId: 'j1', removeOnComplete: true });
    // A key the job never marked (no script writes one like this): left alone by design.
    await client.rpush(`${base}l:j1`, 'unmarked');
    await completeOne(name);
    expect(await jobSideKeys(base)).toEqual(['l:j1']);
  });

  it('in a queue of layout 1 (created by an earlier version), every key is deleted', async () => {
    const { name, base } = connect();
    // The queue exists with layout 1: initQueue keeps the stored version.
    await client.hset(`${base}meta`, 'v', '1');
    const queue = env.queue(name);
    await queue.add('plain', {}, { jobId: 'j1', removeOnComplete: true });
    expect(await queue.getVersion()).toBe('hopper:1');
    // A side key an earlier version wrote without a mark.
    await client.rpush(`${base}l:j1`, 'unmarked');
    await client.hset(`${base}st:j1`, 's', '{"v":1}');
    await completeOne(name);
    expect(await jobSideKeys(base)).toEqual([]);
  });
});
