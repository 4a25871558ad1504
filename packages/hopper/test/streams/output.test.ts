/**
 * Job output streams: `job.stream` in the processor, `queue.readStream` anywhere, and
 * `sendStreamAsSSE` over a real HTTP server.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import {
  CancelledError,
  InvalidDataError,
  InvalidStateError,
  Job,
  LockLostError,
  sendStreamAsSSE,
  type StreamChunk,
} from '../../src/index.js';
import { createBackend } from '../../src/backend/create.js';
import { useHopper } from '../helpers/hopper.js';
import { once, signal, until } from '../helpers/wait.js';
import { withoutLockRenewal } from '../helpers/renewal.js';

const env = useHopper({ fakeClock: true });

async function readAll<T>(iterable: AsyncIterable<StreamChunk<T>>): Promise<StreamChunk<T>[]> {
  const out: StreamChunk<T>[] = [];
  for await (const chunk of iterable) out.push(chunk);
  return out;
}

/** A gate a processor waits on, opened by the test. */
function gate(): { wait: () => Promise<void>; open: () => void } {
  const s = signal();
  return { wait: () => s.promise, open: () => s.resolve() };
}

describe('job output streams', () => {
  it('a reader that starts mid-way replays, then follows live: every chunk once, in order', async () => {
    const name = env.queueName('out');
    const queue = env.queue(name);
    const halfway = gate();
    const resume = gate();
    env.worker(name, async (job) => {
      // Writes not awaited one by one: they are batched, and must still arrive in order.
      const writes: Promise<void>[] = [];
      for (let i = 0; i < 300; i++) writes.push(job.stream.write(`t${i} `));
      await Promise.all(writes);
      halfway.open();
      await resume.wait();
      for (let i = 300; i < 700; i++) {
        void job.stream.write({ i });
        if (i % 50 === 0) await new Promise((r) => setImmediate(r));
      }
      await job.stream.end();
      return 'done';
    });
    const job = await queue.add('gen', {});
    await halfway.wait();
    const reading = readAll(queue.readStream(job.id as string));
    resume.open();
    const chunks = await reading;
    const expected = [...Array.from({ length: 300 }, (_, i) => `t${i} `), ...Array.from({ length: 400 }, (_, i) => ({ i: i + 300 }))];
    expect(chunks.map((c) => c.data)).toEqual(expected);
    expect(new Set(chunks.map((c) => c.id)).size).toBe(700);
    expect(chunks.every((c) => c.attempt === 1)).toBe(true);
    // A second reader after the fact replays the same, and resumes after any chunk.
    const again = await readAll(queue.readStream(job.id as string));
    expect(again).toEqual(chunks);
    const resumed = await readAll(queue.readStream(job.id as string, { from: chunks[499].id }));
    expect(resumed).toEqual(chunks.slice(500));
    expect(() => queue.readStream(job.id as string, { follow: 'no' as unknown as boolean })).not.toThrow(); // checked on first read
    await expect(queue.readStream(job.id as string, { follow: 'no' as unknown as boolean }).next()).rejects.toBeInstanceOf(
      InvalidDataError,
    );
  });

  it('a retried attempt does not mix with the previous one: latest by default, all on request', async () => {
    const name = env.queueName('retry');
    const queue = env.queue(name);
    const firstWritten = gate();
    const failFirst = gate();
    env.worker(name, async (job) => {
      if (job.attemptsMade === 0) {
        await job.stream.write('a');
        await job.stream.write('b');
        firstWritten.open();
        await failFirst.wait();
        throw new Error('model overloaded');
      }
      await job.stream.write('c');
      await job.stream.end();
    });
    const job = await queue.add('gen', {}, { attempts: 2 });
    await firstWritten.wait();
    // Following live from attempt 1: its chunks, then attempt 2's, each marked.
    const live = readAll(queue.readStream(job.id as string));
    failFirst.open();
    expect((await live).map((c) => [c.attempt, c.data])).toEqual([
      [1, 'a'],
      [1, 'b'],
      [2, 'c'],
    ]);
    const latest = await readAll(queue.readStream(job.id as string));
    expect(latest.map((c) => [c.attempt, c.data])).toEqual([[2, 'c']]);
    const all = await readAll(queue.readStream(job.id as string, { attempts: 'all' }));
    expect(all.map((c) => [c.attempt, c.data])).toEqual([
      [1, 'a'],
      [1, 'b'],
      [2, 'c'],
    ]);
  });

  it('ends when the job finishes without end(), and when the signal aborts', async () => {
    const name = env.queueName('noend');
    const queue = env.queue(name);
    const go = gate();
    env.worker(name, async (job) => {
      if (job.name === 'hang') {
        await job.stream.write('waiting');
        await go.wait();
        return;
      }
      await job.stream.write('only');
      return 'ok';
    });
    const done = await queue.add('done', {});
    await until(async () => (await queue.getJobState(done.id as string)) === 'completed', 'job done');
    expect((await readAll(queue.readStream(done.id as string))).map((c) => c.data)).toEqual(['only']);

    const hang = await queue.add('hang', {});
    await until(async () => (await queue.getJobState(hang.id as string)) === 'active', 'the hanging job running');
    // follow: false returns what is stored, without waiting for more.
    await until(async () => (await readAll(queue.readStream(hang.id as string, { follow: false }))).length === 1, 'its first chunk');
    const abort = new AbortController();
    const seen: unknown[] = [];
    for await (const chunk of queue.readStream(hang.id as string, { signal: abort.signal })) {
      seen.push(chunk.data);
      abort.abort();
    }
    expect(seen).toEqual(['waiting']);
    go.open();
  });

  it('fences writes: a stale attempt is refused with LockLostError and its output is not stored', async () => {
    env.expectErrors(/LockLostError/);
    const name = env.queueName('fence');
    const queue = env.queue(name);
    const held = signal<Job>();
    const release = gate();
    let attempt = 0;
    const worker = withoutLockRenewal(
      env.worker(
        name,
        async (job: Job) => {
          attempt++;
          await job.stream.write(`attempt ${attempt}`);
          if (attempt === 1) {
            held.resolve(job);
            await release.wait();
          }
          await job.stream.end();
        },
        { lockDuration: 1000, concurrency: 2 },
      ),
    );
    await queue.add('gen', {});
    const stale = await held.promise;
    const completed = once(worker, 'completed');
    env.clock!.advance(1001);
    await worker.stallRescuer.runOnce(true);
    await completed;
    await expect(stale.stream.write('late')).rejects.toBeInstanceOf(LockLostError);
    // Once refused, the writer refuses everything after (order could not hold).
    await expect(stale.stream.write('later')).rejects.toBeInstanceOf(LockLostError);
    release.open();
    const all = await readAll(queue.readStream(stale.id as string, { attempts: 'all' }));
    expect(all.map((c) => c.data)).toEqual(['attempt 1', 'attempt 2']);
  });

  it('refuses bad input with typed errors, and deletes the stream with its job', async () => {
    const name = env.queueName('bad');
    const queue = env.queue(name);
    expect(() => queue.readStream('')).toThrow(InvalidDataError);
    await expect(queue.readStream('1', { from: 'yesterday' }).next()).rejects.toBeInstanceOf(InvalidDataError);
    await expect(queue.readStream('1', { attempts: 'first' as 'all' }).next()).rejects.toBeInstanceOf(InvalidDataError);
    const results: unknown[] = [];
    env.worker(name, async (job) => {
      for (const bad of [undefined, () => 1, 10n]) {
        results.push(await job.stream.write(bad).catch((err: unknown) => err));
      }
      await job.stream.write('kept');
      await job.stream.end();
      results.push(await job.stream.write('after end').catch((err: unknown) => err));
    });
    const job = await queue.add('x', {}, { removeOnComplete: false });
    await until(async () => (await queue.getJobState(job.id as string)) === 'completed', 'job done');
    expect(results.slice(0, 3).every((r) => r instanceof InvalidDataError)).toBe(true);
    expect(results[3]).toBeInstanceOf(InvalidStateError);
    const fetched = await queue.getJob(job.id as string);
    expect(() => fetched?.stream.write('x')).toThrow(InvalidStateError);

    const backend = createBackend({ connection: env.url, prefix: env.prefix, queueName: name, role: 'command' });
    try {
      expect((await backend.lastOutput(job.id as string))?.kind).toBe('end');
      await (await queue.getJob(job.id as string))?.remove();
      expect(await backend.lastOutput(job.id as string)).toBeUndefined();
    } finally {
      await backend.close();
    }
  });
  it('replays in pages of pageSize (a reader that stops early holds only a page), every chunk once, in order', async () => {
    const name = env.queueName('pages');
    const queue = env.queue(name);
    await expect(queue.readStream('1', { pageSize: 0 }).next()).rejects.toBeInstanceOf(InvalidDataError);
    await expect(queue.readStream('1', { pageSize: 1001 }).next()).rejects.toBeInstanceOf(InvalidDataError);
    await expect(queue.readStream('1', { pageSize: 2.5 }).next()).rejects.toBeInstanceOf(InvalidDataError);
    env.worker(name, async (job) => {
      for (let i = 0; i < 7; i++) await job.stream.write({ i });
      await job.stream.end();
    });
    const job = await queue.add('x', {}, { removeOnComplete: false });
    await until(async () => (await queue.getJobState(job.id as string)) === 'completed', 'job done');
    for (const pageSize of [1, 2, 3, 7, 1000]) {
      const chunks = await readAll(queue.readStream(job.id as string, { follow: false, pageSize }));
      expect([pageSize, chunks.map((c) => (c.data as { i: number }).i)]).toEqual([pageSize, [0, 1, 2, 3, 4, 5, 6]]);
    }
  });
  // 1,000 readers sharing a few Redis connections: output-connections.test.ts (Redis only).
});

describe('sendStreamAsSSE', () => {
  let server: Server | undefined;
  afterEach(async () => {
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    server = undefined;
  });

  /** Parses an SSE body into its events. */
  function events(body: string): { id?: string; event?: string; data?: string }[] {
    return body
      .split('\n\n')
      .filter((block) => block.trim() !== '' && !block.startsWith(':'))
      .map((block) => {
        const e: Record<string, string> = {};
        for (const line of block.split('\n')) {
          const at = line.indexOf(': ');
          if (at > 0) e[line.slice(0, at)] = line.slice(at + 2);
        }
        return e;
      });
  }

  it('streams as Server-Sent Events, resumes from Last-Event-ID, and cancels the job when the client leaves', async () => {
    env.expectErrors(/Cancel/);
    const name = env.queueName('sse');
    const queue = env.queue(name);
    const aborted = signal<string>();
    const go = gate();
    const worker = env.worker(name, async (job, _token, abortSignal) => {
      for (let i = 0; i < 3; i++) await job.stream.write(`w${i}`);
      if (job.name === 'short') return job.stream.end();
      await go.wait(); // an endless generation, until cancelled
      abortSignal?.addEventListener('abort', () => aborted.resolve(String(abortSignal.reason)));
      await new Promise((resolve) => abortSignal?.addEventListener('abort', resolve));
    });
    const outcomes: string[] = [];
    server = createServer((req, res) => {
      const id = decodeURIComponent((req.url ?? '').slice(1));
      void sendStreamAsSSE(queue, id, req, res, { cancelOnDisconnect: true }).then((o) => outcomes.push(o));
    });
    await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;

    const short = await queue.add('short', {});
    const full = await fetch(base + short.id);
    expect(full.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    const all = events(await full.text());
    expect(all.map((e) => e.event)).toEqual(['chunk', 'chunk', 'chunk', 'end']);
    expect(all.slice(0, 3).map((e) => (JSON.parse(e.data as string) as { data: string }).data)).toEqual(['w0', 'w1', 'w2']);
    const resumed = events(await (await fetch(base + short.id, { headers: { 'last-event-id': all[0].id as string } })).text());
    expect(resumed.map((e) => e.id)).toEqual([all[1].id, all[2].id, undefined]);

    const long = await queue.add('long', {});
    const client = new AbortController();
    const res = await fetch(base + long.id, { signal: client.signal });
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    let text = '';
    while (events(text).length < 3) text += new TextDecoder().decode((await reader.read()).value);
    go.open();
    const failed = once<[Job, Error]>(worker, 'failed');
    client.abort();
    const [, err] = await failed;
    expect(err).toBeInstanceOf(CancelledError);
    await until(async () => outcomes.includes('disconnected'), 'the handler saw the disconnect');
    expect(outcomes).toEqual(['ended', 'ended', 'disconnected']);
  });
});
