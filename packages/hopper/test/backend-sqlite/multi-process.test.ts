/**
 * Several processes on one SQLite file database: two worker processes and this one adding jobs
 * and reading events. Every job is processed exactly once and none is lost.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { Queue, QueueEvents } from '../../src/index.js';
import { assertInvariants } from '../helpers/hopper.js';
import { collect, until } from '../helpers/wait.js';

const workerScript = fileURLToPath(new URL('../fixtures/sqlite-worker.mjs', import.meta.url));

const dirs: string[] = [];
const children: ChildProcess[] = [];

afterEach(() => {
  for (const child of children.splice(0)) child.kill('SIGKILL');
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function startWorker(url: string, prefix: string, name: string, seen: Map<string, number[]>, errors: string[]): Promise<ChildProcess> {
  const child = fork(workerScript, [url, prefix, name], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  children.push(child);
  return new Promise((resolve, reject) => {
    child.on('message', (message: { ready?: number; processed?: string; pid?: number; error?: string }) => {
      if (message.ready !== undefined) resolve(child);
      if (message.processed !== undefined) seen.set(message.processed, [...(seen.get(message.processed) ?? []), message.pid ?? 0]);
      if (message.error !== undefined) errors.push(message.error);
    });
    child.on('exit', (code) => reject(new Error(`worker process exited early (code ${code})`)));
  });
}

describe('SQLite file database shared by processes', () => {
  it('two worker processes process every job exactly once, none lost', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'hopper-sqlite-'));
    dirs.push(dir);
    const url = `sqlite:${path.join(dir, 'hopper.db')}`;
    const prefix = 'mp';
    const name = 'shared';
    const queue = new Queue(name, { connection: url, prefix });
    const events = new QueueEvents(name, { connection: url, prefix });
    try {
      await queue.waitUntilReady();
      await events.waitUntilReady();
      const seen = new Map<string, number[]>();
      const errors: string[] = [];
      const workers = await Promise.all([startWorker(url, prefix, name, seen, errors), startWorker(url, prefix, name, seen, errors)]);
      const total = 1000;
      // Read from the other processes' events: every completion is seen here too.
      const completed = collect<[{ jobId: string }]>(events, 'completed', total, 60_000);
      for (let from = 0; from < total; from += 100) {
        await queue.addBulk(Array.from({ length: 100 }, (_, i) => ({ name: 'n', data: { n: from + i } })));
      }
      const done = await completed;
      expect(new Set(done.map(([args]) => args.jobId)).size).toBe(total);
      expect(await queue.getJobCounts('completed', 'waiting', 'active', 'failed')).toEqual({
        completed: total,
        waiting: 0,
        active: 0,
        failed: 0,
      });
      // Exactly once: no job was processed twice, by one process or by both. The workers' reports
      // come over IPC and may trail the completion events: wait for every job's first report.
      await until(async () => seen.size >= total, 'every processed report', 20_000);
      expect(seen.size).toBe(total);
      expect([...seen.values()].filter((pids) => pids.length !== 1)).toEqual([]);
      expect(errors).toEqual([]);
      for (const child of workers) child.send('close');
      await Promise.all(workers.map((child) => new Promise((resolve) => child.once('exit', resolve))));
      await assertInvariants(url, prefix);
    } finally {
      await events.close();
      await queue.close();
    }
  }, 90_000);
});
