/**
 * A job's log lines, numbered per call so that a call re-sent after a lost reply is applied once:
 * every line is kept, once, in order. On both backends. The re-sends themselves are a Redis
 * matter (ioredis re-sends a command whose reply was lost; a SQLite call has no reply to lose):
 * test/backend-redis/log-resend.test.ts replays them (cancelJob: test/cancel/sticky.test.ts;
 * addJobs and addFlow: test/backend-redis/reconnect.test.ts).
 */
import { describe, expect, it } from 'vitest';
import { useHopper } from '../helpers/hopper.js';

const env = useHopper();

describe('job logs', () => {
  it('job.log numbers its calls: every line of a job is kept, in order', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const job = await queue.add('j', {});
    await Promise.all(['a', 'b', 'c'].map((line) => job.log(line)));
    expect(await job.log('d')).toBe(4);
    expect((await queue.getJobLogs(job.id as string)).logs).toEqual(['a', 'b', 'c', 'd']);
  });
});
