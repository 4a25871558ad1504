/**
 * Tenant budgets (docs/budgets.md): adds with a `cost` are charged to their tenant's sliding window
 * atomically with the add, refused with BudgetExceededError past the limit (one job of coalesced
 * adds, a whole addBulk), corrected by `job.reportCost`, read by `queue.getBudget`. On an injected
 * clock: charges leave the window when the clock moves.
 */
import { describe, expect, it } from 'vitest';
import { BudgetExceededError, InvalidOptionsError, Queue, type Job } from '../../src/index.js';
import { useHopper } from '../helpers/hopper.js';
import { once } from '../helpers/wait.js';

const env = useHopper({ fakeClock: true });

const budget = { key: (data: { tenant: string }) => data.tenant, limit: 1000, window: 60_000 };

describe('tenant budgets', () => {
  it('charges adds to their tenant and refuses the one that would go over, with the numbers; the window slides', async () => {
    const name = env.queueName('b');
    const queue = env.queue<{ tenant: string }>(name, { budget });
    await queue.add('gen', { tenant: 'acme' }, { cost: 600 });
    await queue.add('gen', { tenant: 'acme' }, { cost: 300 });
    await queue.add('free', { tenant: 'acme' }); // no cost: not charged
    await queue.add('gen', { tenant: 'globex' }, { cost: 1000 }); // another tenant's budget
    expect(await queue.getBudget('acme')).toEqual({ tenant: 'acme', use: 900, limit: 1000, window: 60_000, remaining: 100 });
    const err = await queue.add('gen', { tenant: 'acme' }, { cost: 101 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BudgetExceededError);
    const e = err as BudgetExceededError;
    expect([e.tenant, e.use, e.cost, e.limit, e.window]).toEqual(['acme', 900, 101, 1000, 60_000]);
    expect(e.message).toBe(
      `Budget exceeded for tenant "acme" on queue "${name}": it used 900 of 1000 in the last 60000 ms, and this job's cost 101 would take it to 1001, ` +
        'so the add was refused and nothing was written. Retry once older costs leave the window (queue.getBudget(tenant) reads the use), lower the estimate, or raise the budget limit.',
    );
    expect(await queue.count()).toBe(4);
    await queue.add('gen', { tenant: 'acme' }, { cost: 100 }); // exactly the limit
    env.clock!.advance(60_001);
    expect((await queue.getBudget('acme')).use).toBe(0);
    await queue.add('gen', { tenant: 'acme' }, { cost: 1000 });
    expect((await queue.getBudget('acme')).use).toBe(1000);
  });

  it('refuses only the over-budget job among coalesced adds, and a whole addBulk', async () => {
    const name = env.queueName('c');
    const queue = env.queue<{ tenant: string }>(name, { budget });
    const results = await Promise.allSettled([
      queue.add('a', { tenant: 't' }, { cost: 500 }),
      queue.add('b', { tenant: 't' }, { cost: 400 }),
      queue.add('c', { tenant: 't' }, { cost: 200 }),
      queue.add('d', { tenant: 't' }, { cost: 100 }),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
    expect((results[2] as PromiseRejectedResult).reason).toBeInstanceOf(BudgetExceededError);
    expect((await queue.getBudget('t')).use).toBe(1000);
    await expect(
      queue.addBulk([
        { name: 'x', data: { tenant: 'u' }, opts: { cost: 10 } },
        { name: 'y', data: { tenant: 'u' }, opts: { cost: 991 } },
      ]),
    ).rejects.toBeInstanceOf(BudgetExceededError);
    expect((await queue.getBudget('u')).use).toBe(0);
    expect(await queue.count()).toBe(3);
  });

  it("job.reportCost(actual) replaces the job's estimate in its tenant's window", async () => {
    const name = env.queueName('r');
    const queue = env.queue<{ tenant: string }>(name, { budget });
    const worker = env.worker(name, async (job: Job) => {
      await job.reportCost(250);
    });
    const completed = once<[Job]>(worker, 'completed');
    await queue.add('gen', { tenant: 'acme' }, { cost: 900 });
    await completed;
    // Closed: it must not take (and report a cost for) the next job before the check below.
    await worker.close();
    expect((await queue.getBudget('acme')).use).toBe(250);
    await queue.add('gen', { tenant: 'acme' }, { cost: 750 }); // fits now
    expect((await queue.getBudget('acme')).remaining).toBe(0);
  });

  it('refuses bad budget options and inputs with clear errors', async () => {
    const name = env.queueName('bad');
    expect(() => new Queue(name, { connection: env.url, budget: { key: 'tenantId', limit: 1, window: 1 } as never })).toThrow(
      /budget.key must be a function/,
    );
    expect(() => new Queue(name, { connection: env.url, budget: { key: () => 't', limit: 0, window: 1 } })).toThrow(/budget.limit/);
    expect(() => new Queue(name, { connection: env.url, budget: { key: () => 't', limit: 1, window: 1.5 } })).toThrow(/budget.window/);
    const queue = env.queue<{ tenant?: string }>(name, { budget });
    await expect(queue.add('x', {}, { cost: 1 })).rejects.toThrow(/budget.key\(data\) must give a tenant/);
    await expect(queue.add('x', { tenant: 't' }, { cost: 1, parent: { id: '1', queue: name } })).rejects.toThrow(
      /cannot be charged to a budget/,
    );
    await expect(env.queue(env.queueName('none')).getBudget('t')).rejects.toThrow(InvalidOptionsError);
    expect(await queue.count()).toBe(0);
  });
});
