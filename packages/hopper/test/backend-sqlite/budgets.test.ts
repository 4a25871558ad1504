/**
 * Tenant budgets on a SQLite file database shared by several producer processes: each add checks
 * and charges the tenant's window in the same transaction as the add, so concurrent producers
 * never take a tenant past its limit (docs/budgets.md; the Redis side is test/limits/budgets.test.ts).
 */
import { fork, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { Queue } from '../../src/index.js';

const producerScript = fileURLToPath(new URL('../fixtures/budget-producer.mjs', import.meta.url));

const dirs: string[] = [];
const children: ChildProcess[] = [];

afterEach(() => {
  for (const child of children.splice(0)) child.kill('SIGKILL');
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

interface Outcome {
  accepted: number[];
  refused: string[];
}

function startProducer(
  url: string,
  prefix: string,
  name: string,
  config: object,
): Promise<{ child: ChildProcess; done: Promise<Outcome> }> {
  const child = fork(producerScript, [url, prefix, name, JSON.stringify(config)], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  children.push(child);
  return new Promise((resolve, reject) => {
    let finish: (outcome: Outcome) => void;
    const done = new Promise<Outcome>((r) => (finish = r));
    child.on('message', (message: { ready?: number } & Partial<Outcome>) => {
      if (message.ready !== undefined) resolve({ child, done });
      if (message.accepted !== undefined) finish({ accepted: message.accepted, refused: message.refused ?? [] });
    });
    child.on('exit', (code) => reject(new Error(`producer process exited early (code ${code})`)));
  });
}

describe('SQLite: tenant budgets across processes', () => {
  it('three producer processes racing on one tenant never take it past its limit', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'hopper-sqlite-budget-'));
    dirs.push(dir);
    const url = `sqlite:${path.join(dir, 'hopper.db')}`;
    const prefix = 'bud';
    const name = 'budget-race';
    const limit = 1000;
    const config = { limit, window: 3_600_000, costs: Array.from({ length: 30 }, (_, i) => 10 + (i % 7) * 5) };
    const queue = new Queue<{ tenant: string }>(name, {
      connection: url,
      prefix,
      budget: { key: (d: { tenant: string }) => d.tenant, limit, window: 3_600_000 },
    });
    try {
      await queue.waitUntilReady();
      const producers = await Promise.all([0, 1, 2].map(() => startProducer(url, prefix, name, config)));
      for (const p of producers) p.child.send('go');
      const outcomes = await Promise.all(producers.map((p) => p.done));
      const accepted = outcomes.flatMap((o) => o.accepted);
      const refused = outcomes.flatMap((o) => o.refused);
      const charged = accepted.reduce((a, b) => a + b, 0);
      // 90 adds of 10..40 (2,250 in all) for a limit of 1,000: some are refused, never too many accepted.
      expect(refused.length).toBeGreaterThan(0);
      expect(new Set(refused)).toEqual(new Set(['BudgetExceededError']));
      expect(charged).toBeLessThanOrEqual(limit);
      expect((await queue.getBudget('t')).use).toBe(charged);
      expect(await queue.count()).toBe(accepted.length);
    } finally {
      await queue.close();
    }
  });
});
