/**
 * releaseOrphans walks the active set with ZSCAN in steps: jobs that finish between its calls
 * (the active set shrinks under the walk) cannot make it skip an orphan or release one twice, as
 * a walk by rank did. Driven step by step through the script, to change the set between calls.
 */
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { createBackend } from '../../src/backend/create.js';
import { queueKeys } from '../../src/backend/redis/keys.js';
import { runScript } from '../../src/backend/redis/script-runner.js';
import { SCRIPTS } from '../../src/backend/redis/scripts.generated.js';
import type { ClaimedJob, QueueBackend } from '../../src/backend/backend.js';
import { useHopper } from '../helpers/hopper.js';

const env = useHopper({ fakeClock: true });

async function addAndClaim(
  backend: QueueBackend,
  queueName: string,
  count: number,
  tokenPrefix: string,
  lockMs = 1000,
): Promise<ClaimedJob[]> {
  const queue = env.queue(queueName);
  for (let from = 0; from < count; from += 1000) {
    await queue.addBulk(Array.from({ length: Math.min(1000, count - from) }, () => ({ name: 'j', data: {} })));
  }
  const claimed: ClaimedJob[] = [];
  for (let round = 1; claimed.length < count; round++) {
    const { jobs } = await backend.claim(
      { count: Math.min(1000, count - claimed.length), lockMs, tokenPrefix: `${tokenPrefix}:${round}:` },
      env.clock!.backendNow(),
    );
    claimed.push(...jobs);
  }
  return claimed;
}

describe('releaseOrphans', () => {
  it('releaseOrphans releases every orphan exactly once while known jobs finish between its calls', async () => {
    const name = env.queueName();
    const backend = env.track(createBackend({ connection: env.url, prefix: env.prefix, queueName: name, role: 'command' }));
    const claimed = await addAndClaim(backend, name, 1200, 'w1', 60_000);
    const known = claimed.filter((_, i) => i % 2 === 0);
    const orphans = claimed.filter((_, i) => i % 2 === 1);
    const pairs = known.flatMap((job) => [job.id, job.token]);
    const k = queueKeys(env.prefix, name);
    const client = new Redis(env.url);
    env.track({ close: async () => void client.disconnect() });
    let cursor = '0';
    let released = 0;
    let step = 0;
    do {
      const reply = (await runScript(
        client,
        SCRIPTS.releaseOrphans,
        {
          meta: k.meta,
          wait: k.wait,
          prio: k.prio,
          prioCounter: k.prioCounter,
          active: k.active,
          failed: k.failed,
          events: k.events,
          marker: k.marker,
        },
        { now: env.clock!.backendNow(), base: k.base, workerId: 'w1', cursor, count: 100, failKeep: 'k', voidUpTo: '' },
        pairs,
      )) as [string, number, number];
      cursor = String(reply[0]);
      released += Number(reply[1]);
      // Between calls the worker finishes a batch of its known jobs: the active set shrinks.
      const batch = known.slice(step * 100, step * 100 + 100);
      step++;
      if (batch.length > 0) {
        const ack = await backend.complete(
          batch.map((job) => ({ id: job.id, token: job.token, attempt: job.attemptsStarted, returnvalue: '1', keep: { kind: 'keep' } })),
          { count: 0, lockMs: 1000, tokenPrefix: 'x' },
          env.clock!.backendNow(),
        );
        expect(ack.codes.every((code) => code === 'done')).toBe(true);
      }
    } while (cursor !== '0');
    expect(released).toBe(orphans.length);
    const counts = await backend.getStateCounts();
    expect(counts.waiting).toBe(orphans.length);
    // No orphan was released twice (each appears once in wait), and no known job was released.
    const waiting = await backend.getRange('waiting', 0, -1, true);
    expect(new Set(waiting).size).toBe(orphans.length);
    expect(new Set(waiting)).toEqual(new Set(orphans.map((job) => job.id)));
    for (const job of await backend.getJobs(orphans.map((o) => o.id))) expect(job?.attemptsStarted).toBe(0);
  });
});
