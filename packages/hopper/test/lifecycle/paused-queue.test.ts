/**
 * A worker of a paused queue waits as an idle worker does (issue 34): a claim that answers
 * "paused" sends it to its idle wait (woken by resume, or after drainDelay), never straight into
 * another claim. Before the fix it claimed in a loop: 1-3k calls a second on Redis, and on SQLite
 * (a synchronous claim) a spin that starved the process's event loop.
 */
import { describe, expect, it } from 'vitest';
import type { QueueBackend } from '../../src/backend/backend.js';
import { once, signal } from '../helpers/wait.js';
import { useHopper } from '../helpers/hopper.js';

const env = useHopper();

/** Counts a backend's direct claims and its idle waits; `enough` resolves at `waits` waits or `claims` claims. */
function countCalls(backend: QueueBackend, limits: { waits: number; claims: number }) {
  const counts = { claims: 0, waits: 0 };
  const enough = signal();
  const seen = (): void => {
    if (counts.waits >= limits.waits || counts.claims >= limits.claims) enough.resolve();
  };
  const claim = backend.claim.bind(backend);
  backend.claim = (...args) => {
    counts.claims++;
    seen();
    return claim(...args);
  };
  const waitForWork = backend.waitForWork.bind(backend);
  backend.waitForWork = (...args) => {
    counts.waits++;
    seen();
    return waitForWork(...args);
  };
  const waitThenClaim = backend.waitThenClaim?.bind(backend);
  if (waitThenClaim) {
    backend.waitThenClaim = (...args) => {
      counts.waits++;
      seen();
      return waitThenClaim(...args);
    };
  }
  return { counts, enough: enough.promise };
}

describe('a worker of a paused queue', () => {
  it('waits idle between claims (one claim per drainDelay at most) and takes the jobs once resumed', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    await queue.pause();
    await queue.add('job', { n: 1 });
    const worker = env.worker(name, async () => 'done', { drainDelay: 0.05, autorun: false });
    const { counts, enough } = countCalls(worker.backend, { waits: 4, claims: 200 });
    void worker.run();
    await enough;
    // Each claim that found the queue paused is followed by a wait: never a claim loop.
    expect(counts.waits).toBeGreaterThanOrEqual(4);
    expect(counts.claims).toBeLessThanOrEqual(counts.waits + 1);
    // Resume is heard (on SQLite the spin starved the event loop: resume() never ran).
    const completed = once(worker, 'completed');
    await queue.resume();
    const [job] = await completed;
    expect((job as { returnvalue: unknown }).returnvalue).toBe('done');
  });
});
