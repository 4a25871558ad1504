/**
 * Cancelling a job that a worker of another process runs, on a SQLite file database: the worker
 * learns it from the queue's cancel signal (sqlite-cancel.ts), within its poll, not at its next
 * lock renewal (15 s with the default lockDuration).
 */
import { fork, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { Queue } from '../../src/index.js';
import { assertInvariants } from '../helpers/hopper.js';
import { until } from '../helpers/wait.js';

const workerScript = fileURLToPath(new URL('../fixtures/sqlite-cancel-worker.mjs', import.meta.url));

type Message = { ready?: number; active?: string; aborted?: string; at?: number; error?: string };

const dirs: string[] = [];
const children: ChildProcess[] = [];

afterEach(() => {
  for (const child of children.splice(0)) child.kill('SIGKILL');
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** The next message of `child` that `match` accepts. */
function next(child: ChildProcess, match: (m: Message) => boolean): Promise<Message> {
  return new Promise((resolve, reject) => {
    const onMessage = (m: Message): void => {
      if (!match(m)) return;
      child.off('message', onMessage);
      child.off('exit', onExit);
      resolve(m);
    };
    const onExit = (code: number | null): void => reject(new Error(`worker process exited early (code ${code})`));
    child.on('message', onMessage);
    child.once('exit', onExit);
  });
}

describe('SQLite: cancel across processes', () => {
  it("aborts the job's signal in the worker's process within a poll of the cancel", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'hopper-sqlite-cancel-'));
    dirs.push(dir);
    const url = `sqlite:${path.join(dir, 'hopper.db')}`;
    const prefix = 'xc';
    const name = 'cancel';
    const queue = new Queue(name, { connection: url, prefix });
    try {
      await queue.waitUntilReady();
      const child = fork(workerScript, [url, prefix, name], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
      children.push(child);
      const errors: string[] = [];
      child.on('message', (m: Message) => m.error !== undefined && errors.push(m.error));
      await next(child, (m) => m.ready !== undefined);
      const latencies: number[] = [];
      for (let i = 0; i < 5; i++) {
        // Listening before the add: the other process may start the job before `add` returns.
        const active = next(child, (m) => m.active !== undefined);
        const job = await queue.add('long', { i });
        expect((await active).active).toBe(job.id);
        const aborted = next(child, (m) => m.aborted === job.id);
        const sent = Date.now();
        expect(await queue.cancelJob(job.id as string)).toBe('signalled');
        const { at } = await aborted;
        latencies.push((at as number) - sent);
        await until(async () => (await queue.getJobState(job.id as string)) === 'failed', 'the cancelled job failed');
      }
      // The lock renewal (every 15 s here) would take far longer: the signal was seen by the poll.
      expect(Math.max(...latencies)).toBeLessThan(1_000);
      expect(errors).toEqual([]);
      const closed = new Promise((resolve) => child.once('exit', resolve));
      child.send('close');
      await closed;
      await assertInvariants(url, prefix);
    } finally {
      await queue.close();
    }
  }, 60_000);
});
