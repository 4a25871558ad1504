// hopper/testing: test a processor, its retries and a delay without Redis and without waiting.
// An in-memory SQLite queue on a fake clock: `advance(ms)` runs what falls due. Run with
// `node examples/testing.mjs` after `npm run build` (needs better-sqlite3, as the SQLite backend).
import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { createTestQueue } from 'hopper-queue/testing';

// The processor under test: charges a card, the gateway fails twice first.
let calls = 0;
async function charge(job) {
  calls++;
  if (calls < 3) throw new Error('gateway 502');
  return { charged: job.data.amount };
}

const t = await createTestQueue('payments', { processor: charge, now: new Date('2026-06-01T09:00:00Z') });
const started = performance.now();

// Retries with exponential backoff (1 s, then 2 s), run by moving the clock.
const job = await t.queue.add('charge', { amount: 42 }, { attempts: 3, backoff: { type: 'exponential', delay: 1000 } });
await t.advance(5_000);
const done = await t.queue.getJob(job.id);
assert.equal(await done.getState(), 'completed');
assert.deepEqual(done.returnvalue, { charged: 42 });
console.log(`charged after ${calls} attempts: ${JSON.stringify(done.returnvalue)}`);

// A reminder a day later: nothing runs before, it runs once the day has passed.
const reminder = await t.queue.add('charge', { amount: 7 }, { delay: 24 * 3_600_000 });
await t.advance(23 * 3_600_000);
assert.equal(await reminder.getState(), 'delayed');
await t.advance(3_600_000);
assert.equal(await reminder.getState(), 'completed');
console.log(`reminder ran at ${new Date(t.clock.now()).toISOString()}`);
console.log(`a day and a few retries in ${performance.now() - started < 5_000 ? 'well under 5 s' : 'too long'} of real time`);

await t.close();
