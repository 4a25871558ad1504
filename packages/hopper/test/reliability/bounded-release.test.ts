/**
 * The stall rescue stays bounded under load: rescueStalled handles at most 500 jobs per call (its
 * retention trim included: a call that failed 1,000 stalled jobs used to trim 2,000 finished ones
 * at once, 14,000 keys to one DEL, past Lua's unpack limit, after its first writes), and the
 * rescuer loops over such calls. (releaseOrphans: test/backend-redis/release-orphans.test.ts.)
 */
import { describe, expect, it } from 'vitest';
import { createBackend } from '../../src/backend/create.js';
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

describe('bounded releases', () => {
  it('rescueStalled fails at most 500 stalled jobs per call, so its retention trim stays bounded', async () => {
    const name = env.queueName();
    const backend = env.track(createBackend({ connection: env.url, prefix: env.prefix, queueName: name, role: 'command' }));
    const rescue = (failKeep: { kind: 'keep' } | { kind: 'limit'; count: number; ageMs: number }) =>
      backend.rescueStalled(
        { maxStalledCount: 0, limit: 1000, intervalMs: 1, force: true, failKeep, eventsMaxAgeMs: 0 },
        env.clock!.backendNow(),
      );
    // 2,000 jobs already failed (kept), then 1,000 more stall with a retention of 5.
    await addAndClaim(backend, name, 2000, 'dead');
    env.clock!.advance(1001);
    while ((await rescue({ kind: 'keep' })).expired > 0);
    expect((await backend.getStateCounts()).failed).toBe(2000);
    await addAndClaim(backend, name, 1000, 'dead2');
    env.clock!.advance(1001);
    const first = await rescue({ kind: 'limit', count: 5, ageMs: -1 });
    expect(first.failed).toHaveLength(500);
    const second = await rescue({ kind: 'limit', count: 5, ageMs: -1 });
    expect(second.failed).toHaveLength(500);
    expect((await rescue({ kind: 'limit', count: 5, ageMs: -1 })).expired).toBe(0);
    const counts = await backend.getStateCounts();
    expect(counts.active).toBe(0);
    // Each call trimmed at most twice what it failed: 2,000 of the 3,000.
    expect(counts.failed).toBe(1000);
  });

  it('the stall rescuer loops over calls of 500 until no expired lock is left', async () => {
    const name = env.queueName();
    const backend = env.track(createBackend({ connection: env.url, prefix: env.prefix, queueName: name, role: 'command' }));
    await addAndClaim(backend, name, 1200, 'dead');
    const worker = env.worker(name, null, { autorun: false });
    env.clock!.advance(1001);
    const result = await worker.stallRescuer.runOnce(true);
    expect(result.rescued).toHaveLength(1200);
    expect(new Set(result.rescued).size).toBe(1200);
    expect((await backend.getStateCounts()).waiting).toBe(1200);
  });
});
