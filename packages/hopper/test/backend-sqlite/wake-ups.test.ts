/**
 * The SQLite backend's cross-process plumbing (database.ts): a committed write is announced to the
 * other connections of the file database through its wake file, and a write waits for another
 * process's write lock (in fine steps) instead of failing.
 */
import { fork } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { acquireStore, releaseStore, type SqliteStore } from '../../src/backend/sqlite/database.js';
import { OTHER_WRITE, POLL_MAX_WATCHED_MS } from '../../src/backend/sqlite/sqlite-wake.js';

const holderScript = fileURLToPath(new URL('../fixtures/sqlite-lock-holder.mjs', import.meta.url));

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0).reverse()) cleanup();
});

/** Opens the file database `file` under the URL `url` (released after the test). */
async function open(url: string): Promise<SqliteStore> {
  const store = await acquireStore(url);
  cleanups.push(() => releaseStore(url, store));
  return store;
}

function tempDir(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'hopper-wake-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

describe('SQLite file database: wake-ups across connections', () => {
  it("tells a connection of another write's commit through the wake file", async () => {
    const dir = tempDir();
    // Two spellings of one file: two connections in this process, sharing no hub, as two processes.
    const a = await open(`sqlite:${path.join(dir, 'hopper.db')}`);
    const b = await open(`sqlite:${dir}/./hopper.db`);
    expect(a).not.toBe(b);
    expect(a.pollMaxMs).toBe(POLL_MAX_WATCHED_MS);
    const told = once(a.hub, OTHER_WRITE);
    b.write(() => b.stmt("INSERT INTO meta (key, value) VALUES ('written', 'by b')").run());
    await told;
    // The notification came after the commit: the write is visible to the other connection.
    expect(a.stmt("SELECT value FROM meta WHERE key = 'written'").get()).toEqual({ value: 'by b' });
  });

  it("waits for another process's write lock, then runs after its commit", async () => {
    const dir = tempDir();
    const file = path.join(dir, 'hopper.db');
    const store = await open(`sqlite:${file}`);
    const holder = fork(holderScript, [file, '200'], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
    cleanups.push(() => holder.kill('SIGKILL'));
    const [message] = (await once(holder, 'message')) as [string];
    expect(message).toBe('locked');
    // The lock is held for 200 ms more: the write waits for it (it would fail with SQLITE_BUSY at
    // once if it did not) and runs after the holder's commit, whose row it reads.
    const held = store.write(() => store.stmt("SELECT value FROM meta WHERE key = 'held'").get() as { value: string } | undefined);
    expect(held).toEqual({ value: String(holder.pid) });
    // The connection's busy timeout is back for reads.
    expect(store.db.pragma('busy_timeout', { simple: true })).toBe(5_000);
  });
});
