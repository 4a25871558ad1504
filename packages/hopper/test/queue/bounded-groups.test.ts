/**
 * drain and clean stay bounded per call however many groups a queue has (issue 12, defect 10):
 * they walk the groups with a cursor, at most 100 groups per call, so the whole walk visits each
 * group about once (it used to read every group from the start in every call: quadratic, and
 * single calls holding Redis for hundreds of ms with 100,000 groups). Asserted on the calls
 * themselves (groups visited per call, calls per walk), not on timing.
 */
import { describe, expect, it } from 'vitest';
import { createBackend } from '../../src/backend/create.js';
import { useHopper } from '../helpers/hopper.js';

const env = useHopper();
const GROUPS = 2_000;
const PER_CALL = 100;

async function groupedQueue(groups: number, perGroup = 1, timestamp?: (g: number, j: number) => number) {
  const queueName = env.queueName();
  const queue = env.queue(queueName);
  const jobs = [];
  for (let g = 0; g < groups; g++) {
    for (let j = 0; j < perGroup; j++) {
      jobs.push({ name: 'j', data: { g, j }, opts: { jobId: `g${g}-${j}`, group: { id: `t${g}` }, timestamp: timestamp?.(g, j) } });
    }
  }
  for (let i = 0; i < jobs.length; i += 1000) await queue.addBulk(jobs.slice(i, i + 1000));
  const backend = env.track(createBackend({ connection: env.url, prefix: env.prefix, queueName, role: 'command' }));
  return { queue, backend };
}

describe('drain and clean on a queue with many groups', () => {
  it(`drain visits at most ${PER_CALL} groups per call and each group about once`, async () => {
    const { queue, backend } = await groupedQueue(GROUPS);
    const visited: number[] = [];
    let removed = 0;
    let cursor: string | null = '';
    while (cursor !== null) {
      const step = await backend.drain(false, 1000, cursor);
      visited.push(step.visitedGroups);
      removed += step.removed;
      cursor = step.cursor;
    }
    expect(removed).toBe(GROUPS);
    expect(Math.max(...visited)).toBeLessThanOrEqual(PER_CALL);
    // Linear: every group once, plus at most one revisit per call (a batch that filled mid-group).
    expect(visited.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(GROUPS + visited.length);
    expect(visited.length).toBeLessThanOrEqual(Math.ceil(GROUPS / PER_CALL) + 1);
    expect(await queue.getJobCounts('waiting', 'prioritized')).toEqual({ waiting: 0, prioritized: 0 });
  });

  it(`clean visits at most ${PER_CALL} groups per call and each group about once`, async () => {
    const { queue, backend } = await groupedQueue(GROUPS);
    const visited: number[] = [];
    const ids: string[] = [];
    let cursor: string | null = '';
    while (cursor !== null) {
      const step = await backend.clean('waiting', 0, 1000, cursor);
      visited.push(step.visitedGroups);
      ids.push(...step.ids);
      cursor = step.cursor;
    }
    expect(new Set(ids).size).toBe(GROUPS);
    expect(Math.max(...visited)).toBeLessThanOrEqual(PER_CALL);
    expect(visited.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(GROUPS + visited.length);
    expect(await queue.getJobCounts('waiting')).toEqual({ waiting: 0 });
  });

  it('clean resumes mid-group past the jobs it kept, and removes exactly the old ones', async () => {
    const old = Date.now() - 60_000;
    // 7 groups of 5 jobs; jobs 1 and 3 of each group are recent, the others old.
    const { queue, backend } = await groupedQueue(7, 5, (_g, j) => (j === 1 || j === 3 ? Date.now() : old));
    const ids: string[] = [];
    let calls = 0;
    let cursor: string | null = '';
    while (cursor !== null) {
      const step = await backend.clean('waiting', 30_000, 3, cursor);
      ids.push(...step.ids);
      cursor = step.cursor;
      calls++;
    }
    const expected = Array.from({ length: 7 }, (_, g) => [0, 2, 4].map((j) => `g${g}-${j}`)).flat();
    expect(ids.sort()).toEqual(expected.sort());
    expect(calls).toBeGreaterThan(7); // limit 3 per call: groups were resumed mid-way
    expect(await queue.getJobCounts('waiting')).toEqual({ waiting: 14 });
    // Queue.clean walks the same cursor to the end.
    expect(await queue.clean(0, 0, 'wait')).toHaveLength(14);
  });

  it('Queue.drain removes every grouped job across many groups', async () => {
    const { queue } = await groupedQueue(1_200, 2);
    await queue.drain();
    expect(await queue.getJobCounts('waiting', 'prioritized')).toEqual({ waiting: 0, prioritized: 0 });
  });
});
