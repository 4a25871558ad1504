/**
 * Job output streams on a SQLite file database across processes: a worker process writes, this
 * process reads. The reader replays then follows live writes of the other process (the adaptive
 * poll of sqlite-output.ts) with every chunk once and in order, and resumes from a chunk's id.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { Queue, type StreamChunk } from '../../src/index.js';

const workerScript = fileURLToPath(new URL('../fixtures/sqlite-stream-worker.mjs', import.meta.url));

const dirs: string[] = [];
const children: ChildProcess[] = [];

afterEach(() => {
  for (const child of children.splice(0)) child.kill('SIGKILL');
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function startWorker(url: string, prefix: string, name: string, errors: string[]): Promise<ChildProcess> {
  const child = fork(workerScript, [url, prefix, name], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  children.push(child);
  return new Promise((resolve, reject) => {
    child.on('message', (message: { ready?: number; error?: string }) => {
      if (message.ready !== undefined) resolve(child);
      if (message.error !== undefined) errors.push(message.error);
    });
    child.on('exit', (code) => reject(new Error(`worker process exited early (code ${code})`)));
  });
}

async function readAll<T>(iterable: AsyncIterable<StreamChunk<T>>): Promise<StreamChunk<T>[]> {
  const out: StreamChunk<T>[] = [];
  for await (const chunk of iterable) out.push(chunk);
  return out;
}

describe('SQLite: job output streams across processes', () => {
  it("follows another process's writes live, every chunk once and in order, and resumes from an id", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'hopper-sqlite-stream-'));
    dirs.push(dir);
    const url = `sqlite:${path.join(dir, 'hopper.db')}`;
    const prefix = 'st';
    const name = 'streams';
    const queue = new Queue(name, { connection: url, prefix });
    try {
      await queue.waitUntilReady();
      const errors: string[] = [];
      const count = 300;
      // The reader starts before the job exists: everything it reads comes live from the other process.
      const job = await queue.add('gen', { count }, { jobId: 'g1' });
      const reading = readAll(queue.readStream('g1') as AsyncIterable<StreamChunk<{ i: number; at: number }>>);
      await startWorker(url, prefix, name, errors);
      const chunks = await reading;
      expect(chunks.map((c) => c.data.i)).toEqual(Array.from({ length: count }, (_, i) => i));
      expect(new Set(chunks.map((c) => c.id)).size).toBe(count);
      expect(chunks.every((c) => c.attempt === 1)).toBe(true);
      // Resumed after chunk 99 (an SSE Last-Event-ID): the rest, from chunk 100.
      const rest = await readAll(queue.readStream(job.id as string, { from: chunks[99].id }) as AsyncIterable<StreamChunk<{ i: number }>>);
      expect(rest.map((c) => c.data.i)).toEqual(Array.from({ length: count - 100 }, (_, i) => i + 100));
      expect(errors).toEqual([]);
    } finally {
      await queue.close();
    }
  });
});
