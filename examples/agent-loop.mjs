// An agent loop run as a chain of jobs (`job.continueWith`), with a run budget and `cancelRun`: a
// fake model "spends" tokens each turn; one run stops when its cost reaches maxCost, another is
// cancelled by the user while a turn is running (its signal aborts, no turn follows).
// Run with `npm run build && node examples/agent-loop.mjs` (uses REDIS_URL or a local Redis).
import { Queue, Worker } from 'hopper-queue';
import { redisUrl } from './lib/redis.mjs';

const { url: connection, stop } = await redisUrl();
const prefix = `agent-example-${process.pid}`;
const queue = new Queue('agent', { connection, prefix });

// A fake model turn: 30 ms of "thinking", 700 tokens spent. `slow` turns wait to be cancelled.
async function modelTurn(signal, slow) {
  await new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, slow ? 60_000 : 30);
    signal?.addEventListener('abort', () => {
      clearTimeout(timer);
      reject(new Error('aborted by the run cancel'));
    });
  });
  return { tokens: 700 };
}

const turnStarted = new Map();
const worker = new Worker(
  'agent',
  async (job, _token, signal) => {
    const { runId, slowFrom } = job.data;
    const turn = Number(job.id.split(':').at(-1));
    turnStarted.get(runId)?.(turn);
    const reply = await job.step('llm', () => modelTurn(signal, slowFrom !== undefined && turn >= slowFrom));
    const runCost = await job.reportCost(reply.tokens);
    console.log(`${runId} turn ${turn}: ${reply.tokens} tokens, run cost ${runCost ?? reply.tokens}`);
    await job.continueWith(job.data, { maxTurns: 25, maxCost: 2_000 });
  },
  { connection, prefix },
);

const ended = (runId) =>
  new Promise((resolve) =>
    worker.on('failed', (job, err) => {
      if (job.data.runId === runId) resolve(err);
    }),
  );

// 1. A run that stops at its budget: 700 tokens a turn, maxCost 2,000 -> turns 0, 1, 2.
const budgetEnd = ended('research');
await queue.add('turn', { runId: 'research' }, { jobId: 'research:0' });
console.log(`research ended: ${(await budgetEnd).message}`);
console.log(`research run: ${JSON.stringify(await queue.getRun('research'))}`);

// 2. A run cancelled by the user while turn 1 is thinking.
const atTurnOne = new Promise((resolve) => turnStarted.set('chat', (turn) => turn === 1 && resolve()));
const chatEnd = ended('chat');
await queue.add('turn', { runId: 'chat', slowFrom: 1 }, { jobId: 'chat:0' });
await atTurnOne;
console.log(`cancelRun: ${JSON.stringify(await queue.cancelRun('chat', 'the user pressed stop'))}`);
console.log(`chat ended: ${(await chatEnd).name}`);
console.log(`chat turn 2 exists: ${(await queue.getJob('chat:2')) !== undefined}`);

await worker.close();
await queue.obliterate({ force: true });
await queue.close();
await stop();
