/**
 * Issue 34 (SQLite): a SqliteError never reaches a caller raw; it is mapped at the backend seam
 * to a BackendError naming the operation, SQLite's code and what to do. And the sqlite: URL forms
 * that used to mean something else are refused before any file is opened.
 */
import { mkdtempSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { BackendError, InvalidOptionsError, Queue } from '../../src/index.js';
import { toTypedError } from '../../src/backend/guard.js';

const dirs: string[] = [];
const queues: Queue[] = [];

afterEach(async () => {
  for (const queue of queues.splice(0)) await queue.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'hopper-typed-'));
  dirs.push(dir);
  return dir;
}

describe('SQLite errors reach callers typed', () => {
  it('a file that is not a SQLite database: a BackendError saying so, not a raw SqliteError', async () => {
    const file = path.join(tempDir(), 'notes.db');
    writeFileSync(file, 'these are my notes, not a database\n'.repeat(200));
    let err: unknown;
    try {
      const queue = new Queue('q', { connection: `sqlite:${file}` });
      queues.push(queue);
      queue.on('error', () => undefined);
      await queue.add('x', {});
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(BackendError);
    expect((err as BackendError).backend).toBe('sqlite');
    expect((err as Error).message).toMatch(/SQLITE_NOTADB.*not a SQLite database/);
  });

  it('maps SQLite codes to what to do', () => {
    const busy = Object.assign(new Error('database is locked'), { name: 'SqliteError', code: 'SQLITE_BUSY' });
    const mapped = toTypedError(busy, 'addJobs', 'sqlite', 'mail');
    expect(mapped).toBeInstanceOf(BackendError);
    expect((mapped as BackendError).operation).toBe('addJobs');
    expect((mapped as Error).message).toBe(
      'SQLite failed addJobs on queue "mail": database is locked (SQLITE_BUSY). another process held the database write lock too long: retry.',
    );
    expect((mapped as Error).cause).toBe(busy);
  });

  it('refuses sqlite: URLs that would name another file, before opening anything', () => {
    const dir = tempDir();
    for (const url of [`SQLite:${dir}/a.db`, `sqlite:${dir}/b.db?mode=ro`, `sqlite://${dir.slice(1)}/c.db`]) {
      expect(() => new Queue('q', { connection: url }), url).toThrow(InvalidOptionsError);
    }
    expect(existsSync(`${dir}/a.db`) || existsSync(`${dir}/b.db?mode=ro`) || existsSync(`${dir}/b.db`)).toBe(false);
    // sqlite:/// names an absolute path.
    const queue = new Queue('q', { connection: `sqlite:///${dir.slice(1)}/d.db` });
    queues.push(queue);
    return queue.waitUntilReady().then(() => expect(existsSync(`${dir}/d.db`)).toBe(true));
  });
});
