// A streamed LLM-style generation served over HTTP, the founding guide's endpoint: POST adds a
// generation job, GET streams its output as Server-Sent Events (resumable with Last-Event-ID),
// and a client that goes away cancels the job so the generation stops spending. Each tenant has a
// token budget (docs/budgets.md): POST charges the job's estimate to it atomically with the add and
// answers 429 when it is spent; the job reports its actual tokens, which correct the estimate. A
// weighted limiter keeps the workers under the provider's tokens-per-minute quota (docs/limits.md).
// A fake model streams tokens, so this runs offline. The script plays the browser itself.
// Run with `npm run build && node examples/generation.mjs` (uses REDIS_URL or a local Redis).
import { createServer } from 'node:http';
import { BudgetExceededError, Queue, Worker, sendStreamAsSSE } from 'hopper-queue';
import { redisUrl } from './lib/redis.mjs';

// A fake streaming model: one token every 20 ms; stops when the signal aborts.
async function* fakeModel(prompt, signal) {
  const words = `Here is a short answer to "${prompt}", streamed one token at a time.`.split(' ');
  for (const word of words) {
    if (signal?.aborted) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
    yield `${word} `;
  }
}

const { url: connection, stop } = await redisUrl();
const prefix = `generation-example-${process.pid}`;
// Each tenant may spend 50 tokens a minute (a real app: millions a day); a job's cost is its estimate.
const queue = new Queue('generations', { connection, prefix, budget: { key: (data) => data.tenant, limit: 50, window: 60_000 } });
const ESTIMATE = 25;
const worker = new Worker(
  'generations',
  async (job, _token, signal) => {
    let tokens = 0;
    for await (const token of fakeModel(job.data.prompt, signal)) {
      tokens++;
      await job.stream.write(token);
    }
    // The actual spend replaces the estimate in the tenant's budget.
    await job.reportCost(tokens);
    await job.stream.end();
    return { tokens };
  },
  {
    connection,
    prefix,
    concurrency: 10,
    // The provider's tokens-per-minute quota: each job weighs its `cost` (its estimate).
    limiter: { max: 90_000, duration: 60_000, weight: 'cost' },
  },
  // The model SDK's own retries stay off (maxRetries: 0 in a real SDK): Hopper retries the job
  // (attempts: 2 below), so the two do not multiply.
);
worker.on('failed', (job, err) => console.log(`job ${job.id} ended: ${err.name}`));

const server = createServer(async (req, res) => {
  if (req.method === 'POST' && req.url === '/generations') {
    let body = '';
    for await (const part of req) body += part;
    const { prompt, tenant, estimate = ESTIMATE } = JSON.parse(body);
    try {
      const job = await queue.add('generate', { prompt, tenant }, { attempts: 2, cost: estimate });
      res.writeHead(202, { 'content-type': 'application/json' }).end(JSON.stringify({ id: job.id }));
    } catch (err) {
      if (!(err instanceof BudgetExceededError)) throw err;
      res.writeHead(429, { 'content-type': 'application/json' }).end(JSON.stringify({ error: err.message }));
    }
  } else if (req.method === 'GET' && req.url?.startsWith('/generations/')) {
    await sendStreamAsSSE(queue, req.url.slice('/generations/'.length), req, res, { cancelOnDisconnect: true });
  } else {
    res.writeHead(404).end();
  }
});
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const base = `http://127.0.0.1:${server.address().port}`;

/** Reads SSE events from a response until `stopAfter` chunks (or the end); returns their data. */
async function readEvents(res, stopAfter = Infinity, abort) {
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  const tokens = [];
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return tokens;
    buffer += decoder.decode(value, { stream: true });
    let at;
    while ((at = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, at);
      buffer = buffer.slice(at + 2);
      const data = /^data: (.*)$/m.exec(block)?.[1];
      if (/^event: chunk$/m.test(block)) tokens.push(JSON.parse(data).data);
      if (/^event: end$/m.test(block)) return tokens;
      if (tokens.length >= stopAfter) {
        abort?.abort();
        return tokens;
      }
    }
  }
}

// 1. A full generation, read to the end.
const send = (prompt, estimate) =>
  fetch(`${base}/generations`, { method: 'POST', body: JSON.stringify({ prompt, tenant: 'acme', estimate }) });
const post = async (prompt) => (await (await send(prompt)).json()).id;
const first = await post('What is a job queue?');
const text = (await readEvents(await fetch(`${base}/generations/${first}`))).join('');
console.log(`streamed: ${text.trim()}`);
const afterFirst = await queue.getBudget('acme');
console.log(
  `acme budget: ${afterFirst.use} of ${afterFirst.limit} tokens used (the estimate of ${ESTIMATE}, corrected by the job's report)`,
);

// 2. A tab closed after 3 tokens: the job is cancelled, the model stops.
const second = await post('Tell me a long story');
const cancelled = new Promise((resolve) => worker.once('failed', resolve));
const abort = new AbortController();
const seen = await readEvents(await fetch(`${base}/generations/${second}`, { signal: abort.signal }), 3, abort);
console.log(`read ${seen.length} tokens, then closed the tab`);
await cancelled;
console.log(`job ${second} state: ${await queue.getJobState(second)}`);

// 3. The tenant's budget: 17 tokens of the first job and the few the cancelled one spent leave
// less than 40 of 50, so a job estimated at 40 is refused (nothing is added).
const refused = await send('Write a long essay', 40);
const { error } = await refused.json();
console.log(`POST refused: ${refused.status} ${error.slice(0, error.indexOf(':'))}`);

server.close();
await worker.close();
await queue.obliterate({ force: true });
await queue.close();
await stop();
