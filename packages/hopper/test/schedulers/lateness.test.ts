/**
 * When an occurrence counts as missed (issue 12, defects 8 and 12): lateness is measured from
 * the time it was due (its instant plus jitter), and a new `every` scheduler's first occurrence
 * (the current grid slot) is due when it is created, whatever `every` and `catchupWindow` are.
 */
import { describe, expect, it } from 'vitest';
import { planAdvance } from '../../src/schedule/advance-plan.js';
import { jitterFor } from '../../src/schedule/jitter.js';
import { validateRepeat } from '../../src/schedule/validate-repeat.js';
import type { Job } from '../../src/index.js';
import { useHopper } from '../helpers/hopper.js';
import { once, until } from '../helpers/wait.js';

const env = useHopper({ fakeClock: true });
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const T0 = Date.UTC(2026, 0, 1); // the fake clock's start: on every hour grid

describe('lateness of occurrences', () => {
  it('jitter larger than catchupWindow: occurrences promoted at their due time run, none is missed', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const spec = { every: 10 * MINUTE, jitter: 9 * MINUTE, catchupWindow: MINUTE };
    await queue.upsertJobScheduler('j', spec, { name: 'tick' });
    const worker = env.worker(name, async () => 'ok');
    const ran: string[] = [];
    const jitters: number[] = [];
    for (let i = 0; i < 5; i++) {
      const instant = T0 + i * 10 * MINUTE;
      await until(async () => (await queue.getJobSchedulerState('j'))?.next !== undefined, `occurrence ${i} to be planned`);
      const due = (await queue.getJobSchedulerState('j'))!.next!;
      jitters.push(due - instant);
      const completed = once<[Job]>(worker, 'completed');
      env.clock!.set(due);
      ran.push((await completed)[0].id as string);
      await until(async () => (await queue.getJobSchedulerState('j'))?.next !== due, `the scheduler to advance past occurrence ${i}`);
    }
    expect(ran).toEqual([0, 1, 2, 3, 4].map((i) => `sched:j:${T0 + i * 10 * MINUTE}`));
    // Most jitters exceed the window: measured from the instant, those would have been missed.
    expect(jitters.filter((j) => j > MINUTE).length).toBeGreaterThanOrEqual(2);
    expect(jitters.every((j) => j >= 0 && j < 9 * MINUTE)).toBe(true);
    expect(await queue.getJobSchedulerState('j')).toMatchObject({ fired: 5, missed: 0, skippedByOverlap: 0 });
  });

  it('an occurrence promoted later than catchupWindow after its jittered due time is missed', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    await queue.upsertJobScheduler('j', { every: 10 * MINUTE, jitter: 9 * MINUTE, catchupWindow: MINUTE }, { name: 'tick' });
    const due = (await queue.getJobSchedulerState('j'))!.next!;
    // Nobody promotes it on time: a worker starts 2 minutes after it was due.
    env.clock!.set(due + 2 * MINUTE);
    env.worker(name, async () => 'ok');
    // Counted missed when promoted; the next occurrence is planned by the scheduler tick after that.
    await until(async () => {
      const record = await queue.getJobSchedulerState('j');
      return record?.missed === 1 && record.next !== due;
    }, 'the late occurrence to be counted missed and the next one planned');
    expect(await queue.getJobSchedulerState('j')).toMatchObject({
      fired: 0,
      next: T0 + 10 * MINUTE + jitterFor('j', T0 + 10 * MINUTE, 9 * MINUTE, T0 + 20 * MINUTE),
    });
  });

  for (const [label, every, catchupWindow, into] of [
    ['every 1 h, default window, 30 min into the slot', HOUR, undefined, 30 * MINUTE],
    ['every 10 min, 1 min window, 9 min into the slot', 10 * MINUTE, MINUTE, 9 * MINUTE],
  ] as const) {
    it(`${label}: the first occurrence runs at once and is not missed`, async () => {
      env.clock!.set(T0 + into);
      const name = env.queueName();
      const queue = env.queue(name);
      const first = await queue.upsertJobScheduler('e', { every, catchupWindow }, { name: 'tick' });
      expect(first?.id).toBe(`sched:e:${T0}`);
      const worker = env.worker(name, async () => 'ok');
      const [job] = await once<[Job]>(worker, 'completed');
      expect(job.id).toBe(`sched:e:${T0}`);
      await until(async () => (await queue.getJobSchedulerState('e'))?.next === T0 + every, 'the next occurrence to be planned');
      expect(await queue.getJobSchedulerState('e')).toMatchObject({ fired: 1, missed: 0, created: 2 });
    });
  }

  it('plans the first every occurrence due now, and `after` as the next occurrence’s jittered due time', () => {
    const now = T0 + 30 * MINUTE;
    const plain = planAdvance({ schedulerId: 's', spec: validateRepeat({ every: HOUR }, { now }), last: null, created: 0, now });
    expect(plain).toEqual({ occurrences: [{ instant: T0, due: now, pending: true }], after: T0 + HOUR, missed: 0 });
    const spec = validateRepeat({ every: HOUR, jitter: 50 * MINUTE }, { now });
    const jittered = planAdvance({ schedulerId: 's', spec, last: null, created: 0, now });
    const firstDue = Math.max(now, T0 + jitterFor('s', T0, 50 * MINUTE, T0 + HOUR));
    expect(jittered.occurrences).toEqual([{ instant: T0, due: firstDue, pending: true }]);
    expect(jittered.after).toBe(T0 + HOUR + jitterFor('s', T0 + HOUR, 50 * MINUTE, T0 + 2 * HOUR));
  });
});
