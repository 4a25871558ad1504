/**
 * SQLite: a start that failed recovers when the database becomes reachable, and a database file
 * lost under a running process is reported, never written to (issue 34).
 * - another process holds the write lock past the busy timeout (5 s) while components start;
 * - the database's directory does not exist yet (jobs added later by other processes waited for
 *   ever: the failed open was kept for good);
 * - the database file is deleted while running (processes diverged silently: this one kept
 *   writing to the unlinked file, which no other process sees).
 */
import { fork } from 'node:child_process';
import { once as onceEvent } from 'node:events';
import { mkdirSync, mkdtempSync, rmSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { ConnectionError, DatabaseLostError, Queue, Worker } from '../../src/index.js';
import { once, until } from '../helpers/wait.js';

const holderScript = fileURLToPath(new URL('../fixtures/sqlite-lock-holder.mjs', import.meta.url));
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function tempDir(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'hopper-start-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A Queue and a Worker on `url`, closed after the test; their `error` events are collected. */
function components(url: string) {
  const errors: unknown[] = [];
  const queue = new Queue('q', { connection: url });
  const worker = new Worker('q', async (job) => `done ${job.id}`, { connection: url });
  for (const c of [queue, worker]) {
    c.on('error', (err: unknown) => errors.push(err));
    cleanups.push(() => c.close());
  }
  return { queue, worker, errors };
}

const started = (queue: Queue) =>
  queue.waitUntilReady().then(
    () => true,
    () => false,
  );

describe('SQLite: a failed start recovers', () => {
  it('another process holds the write lock past the busy timeout: a typed error, then the components start by themselves', async () => {
    const file = path.join(tempDir(), 'q.db');
    const url = `sqlite:${file}`;
    // The schema first (then closed: the next open is the one that meets the lock).
    const setup = new Queue('q', { connection: url });
    await setup.waitUntilReady();
    await setup.close();
    const holder = fork(holderScript, [file, '6500'], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
    cleanups.push(() => void holder.kill('SIGKILL'));
    expect((await onceEvent(holder, 'message'))[0]).toBe('locked');
    const exited = onceEvent(holder, 'exit');
    const { queue, worker, errors } = components(url);
    const err = await queue.waitUntilReady().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ConnectionError);
    expect((err as Error).message).toMatch(/locked by another process/);
    await exited;
    const completed = once<[{ id: string }]>(worker, 'completed', () => true, 20_000);
    await until(() => started(queue), 'the queue started', 20_000, 100);
    const job = await queue.add('x', {});
    const [done] = await completed;
    expect(done.id).toBe(job.id);
    expect(errors.every((e) => e instanceof ConnectionError)).toBe(true);
  });

  it("the database's directory is missing: a typed error naming it, then the components start once it exists", async () => {
    const dir = path.join(tempDir(), 'later');
    const url = `sqlite:${path.join(dir, 'q.db')}`;
    const { queue, worker, errors } = components(url);
    await expect(queue.waitUntilReady()).rejects.toThrow(new RegExp(`directory ${dir} does not exist: create it`));
    await expect(queue.add('x', {})).rejects.toBeInstanceOf(ConnectionError);
    mkdirSync(dir);
    const completed = once(worker, 'completed', () => true, 20_000);
    await until(() => started(queue), 'the queue started', 20_000, 100);
    await queue.add('x', {});
    await completed;
    expect(errors.length).toBeGreaterThan(0);
    expect(errors.every((e) => e instanceof ConnectionError)).toBe(true);
  });
});

describe('SQLite: the database file lost while running', () => {
  it('is reported as a typed error event, and nothing more is written to the unlinked file', async () => {
    const file = path.join(tempDir(), 'q.db');
    const url = `sqlite:${file}`;
    const { queue, worker, errors } = components(url);
    await queue.waitUntilReady();
    await worker.waitUntilReady();
    const lost = once(queue, 'error', (e) => e instanceof DatabaseLostError, 10_000);
    const workerLost = once(worker, 'error', (e) => e instanceof DatabaseLostError, 10_000);
    unlinkSync(file);
    const [err] = (await lost) as [Error];
    await workerLost;
    expect(err.message).toMatch(/was deleted while this process had it open/);
    await expect(queue.add('x', {})).rejects.toBeInstanceOf(DatabaseLostError);
    await expect(queue.getJobCounts('waiting')).rejects.toBeInstanceOf(DatabaseLostError);
    // A component opened now uses the file now at the path (a new, empty database); the old worker
    // takes nothing from it (it holds the lost one).
    const fresh = new Queue('q', { connection: url });
    cleanups.push(() => fresh.close());
    await fresh.add('y', {});
    expect(await fresh.getJobCounts('waiting', 'active', 'completed')).toEqual({ waiting: 1, active: 0, completed: 0 });
    expect(errors.filter((e) => !(e instanceof DatabaseLostError))).toEqual([]);
  });
});
