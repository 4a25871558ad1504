// Durable steps and loops: an agent loop where each turn is a job and each tool call a step.
// The second turn crashes after sending an email; its retry does not send it again, and the loop
// ends when the (scripted) model stops asking for tools.
// Run with `npm run build && node examples/steps.mjs` (uses REDIS_URL or a local Redis).
import { Queue, QueueEvents, Worker } from 'hopper-queue';
import { redisUrl } from './lib/redis.mjs';

const { url: connection, stop } = await redisUrl();
const prefix = `steps-example-${process.pid}`;
const queue = new Queue('agent', { connection, prefix });
const events = new QueueEvents('agent', { connection, prefix });
await events.waitUntilReady();

// A scripted "model": asks for a tool on the first two turns, then answers.
const script = [
  { stop_reason: 'tool_use', tool: { id: 'toolu_1', name: 'lookup', input: 'order 42' } },
  { stop_reason: 'tool_use', tool: { id: 'toolu_2', name: 'send_email', input: 'your order shipped' } },
  { stop_reason: 'end_turn', text: 'Done: the customer was told.' },
];
const sent = [];
let crashed = false;

const worker = new Worker(
  'agent',
  async (job) => {
    const turn = Number(job.id.split(':').pop());
    const reply = await job.step('llm', () => script[turn]);
    if (reply.stop_reason !== 'tool_use') return { done: true, text: reply.text };
    // One step per tool call, keyed by its tool-use id: a retried turn never repeats it.
    const output = await job.step(`tool:${reply.tool.id}`, () => {
      if (reply.tool.name === 'send_email') sent.push(reply.tool.input);
      return `${reply.tool.name} ok`;
    });
    if (reply.tool.name === 'send_email' && !crashed) {
      crashed = true;
      throw new Error('worker crashed after the email (simulated)');
    }
    const next = await job.continueWith(job.data, { maxTurns: 10 });
    console.log(`turn ${turn}: ${reply.tool.name} -> ${output}; next turn ${next}`);
    return { done: false };
  },
  { connection, prefix },
);
worker.on('failed', (job, err) => console.log(`turn ${job.id} failed: ${err.message} (will retry)`));

const runId = 'run-7';
await queue.add('turn', { runId }, { jobId: `${runId}:0`, attempts: 3 });
const last = await events.waitForJob(`${runId}:2`, 10_000); // the last turn, added by the loop
console.log('last turn:', JSON.stringify(last));
console.log(`emails sent: ${sent.length} (${JSON.stringify(sent)})`);
const steps = await (await queue.getJob(`${runId}:1`)).getSteps();
console.log(`steps of turn 1: ${steps.map((s) => s.key).join(', ')}`);

await worker.close();
await events.close();
await queue.obliterate({ force: true });
await queue.close();
stop();
