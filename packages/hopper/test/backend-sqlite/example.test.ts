/**
 * The SQLite example docs/backends.md points to (examples/sqlite.mjs) runs to completion with
 * nothing but Node, and prints what the docs say. It uses the built package (npm test builds it).
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const example = fileURLToPath(new URL('../../../../examples/sqlite.mjs', import.meta.url));

describe('examples/sqlite.mjs', () => {
  it('adds a job on a file database, retries it once with backoff, and reads its result through QueueEvents', async () => {
    const { stdout } = await run(process.execPath, [example], { timeout: 25_000 });
    expect(stdout).toContain('attempt 1 of 1 failed: mail server busy');
    expect(stdout).toContain('result: sent to ada@example.com');
    expect(stdout).toContain('counts: {"completed":1,"failed":0,"waiting":0}');
  });
});
