// A streamed LLM-style generation served over HTTP, the founding guide's endpoint: POST adds a
// generation job, GET streams its output as Server-Sent Events (resumable with Last-Event-ID),
// and a client that goes away cancels the job so the generation stops spending. A fake model
// streams tokens, so this runs offline. The script plays the browser itself.
// Run with `npm run build && node examples/generation.mjs` (uses REDIS_URL or a local Redis).
import { createServer } from 'node:http';
import { Queue, Worker, sendStreamAsSSE } from 'hopper';
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
const queue = new Queue('generations', { connection, prefix });
let tokensSpent = 0;
const worker = new Worker(
  'generations',
  async (job, _token, signal) => {
    for await (const token of fakeModel(job.data.prompt, signal)) {
      tokensSpent++;
      await job.stream.write(token);
    }
    await job.stream.end();
    return { tokens: tokensSpent };
  },
  // The model SDK's own retries stay off (maxRetries: 0 in a real SDK): Hopper retries the job.
  { connection, prefix, concurrency: 10 },
);
worker.on('failed', (job, err) => console.log(`job ${job.id} ended: ${err.name}`));

const server = createServer(async (req, res) => {
  if (req.method === 'POST' && req.url === '/generations') {
    let body = '';
    for await (const part of req) body += part;
    const job = await queue.add('generate', { prompt: JSON.parse(body).prompt }, { attempts: 2 });
    res.writeHead(202, { 'content-type': 'application/json' }).end(JSON.stringify({ id: job.id }));
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
const post = async (prompt) => (await (await fetch(`${base}/generations`, { method: 'POST', body: JSON.stringify({ prompt }) })).json()).id;
const first = await post('What is a job queue?');
const text = (await readEvents(await fetch(`${base}/generations/${first}`))).join('');
console.log(`streamed: ${text.trim()}`);

// 2. A tab closed after 3 tokens: the job is cancelled, the model stops.
const second = await post('Tell me a long story');
const cancelled = new Promise((resolve) => worker.once('failed', resolve));
const abort = new AbortController();
const seen = await readEvents(await fetch(`${base}/generations/${second}`, { signal: abort.signal }), 3, abort);
console.log(`read ${seen.length} tokens, then closed the tab`);
await cancelled;
console.log(`job ${second} state: ${await queue.getJobState(second)}`);

server.close();
await worker.close();
await queue.obliterate({ force: true });
await queue.close();
await stop();
