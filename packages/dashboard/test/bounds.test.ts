/**
 * Replies bounded in bytes, and actions bounded in work and audited in full: a job with 1 MB
 * data, twenty 1 MB log lines and twenty 1 MB output chunks answers within maxResponseBytes, each
 * cut marked and counted; a page of large jobs keeps every job's id; the audit log records refused
 * and failed actions, the ids of a bulk action and details longer than 200 characters (bounded),
 * and at most 30 refusals a minute per caller; a dead-letter replay refuses over 1,000 ids and,
 * without ids, replays one bounded slice per request with a cursor to go on.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { useHopper } from '../../hopper/test/helpers/hopper.js';
import { collect } from '../../hopper/test/helpers/wait.js';
import type { DashboardOptions } from '../src/index.js';
import { DEFAULT_LIMITS } from '../src/index.js';
import { MOUNT_KINDS, mount, type Mount, type MountKind, type RawResponse } from './helpers/mounts.js';

const env = useHopper();
const TOKEN = 'bounds-operator-token-0123456';
const VIEWER = 'bounds-viewer-token-01234567';
const mounts: Mount[] = [];
afterEach(async () => {
  for (const m of mounts.splice(0)) await m.close();
});

async function start(kind: MountKind, options: Partial<DashboardOptions> = {}): Promise<Mount> {
  const m = await mount(kind, {
    connection: env.url,
    prefix: env.prefix,
    auth: {
      tokens: [
        { token: TOKEN, name: 'ops' },
        { token: VIEWER, role: 'viewer', name: 'support' },
      ],
    },
    ...options,
  });
  mounts.push(m);
  return m;
}

async function call(m: Mount, method: string, path: string, body?: unknown, token = TOKEN): Promise<RawResponse> {
  return (await m.send({
    method,
    target: `${m.basePath}${path}`,
    headers: { host: m.host, authorization: `Bearer ${token}`, ...(method === 'POST' ? { 'x-hopper-csrf': '1' } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  })) as RawResponse;
}

const MB = 1_000_000;

describe('replies bounded in bytes', () => {
  it('a job with 1 MB data, 20 x 1 MB logs and 20 x 1 MB output chunks answers within maxResponseBytes, cuts marked', async () => {
    const name = env.queueName('huge');
    const queue = env.queue(name);
    const worker = env.worker(name, async (job) => {
      for (let i = 0; i < 20; i++) await job.stream.write(`${i}:`.padEnd(MB, 'o'));
      for (let i = 0; i < 20; i++) await job.log(`${i}:`.padEnd(MB, 'l'));
      return 'r'.repeat(MB);
    });
    const done = collect(worker, 'completed', 1);
    await queue.add('big', { blob: 'd'.repeat(MB), small: 'kept' }, { jobId: 'h1' });
    await done;
    await worker.close();
    for (const kind of ['node', 'fetch'] as const) {
      const m = await start(kind);
      const res = await call(m, 'GET', `api/queues/${name}/jobs/h1`);
      expect(res.status).toBe(200);
      const bytes = Buffer.byteLength(res.text);
      // 82 MB stored; the reply stays within the default 4 MiB (and a few KB of fields kept whole).
      expect(bytes).toBeLessThan(DEFAULT_LIMITS.maxResponseBytes + 16_384);
      expect(bytes).toBeGreaterThan(DEFAULT_LIMITS.maxResponseBytes / 2); // it shows what fits
      const job = res.json() as {
        id: string;
        data: { blob: string; small: string };
        returnvalue: string;
        logs: string[];
        logCount: number;
        output: { chunks: { data: string }[]; truncated: boolean };
        cut: number;
      };
      expect(job.id).toBe('h1');
      expect(job.data.small).toBe('kept');
      expect(job.data.blob).toMatch(/^d+… \[cut: 1000000 bytes\]$/);
      expect(Buffer.byteLength(job.data.blob)).toBeLessThanOrEqual(DEFAULT_LIMITS.maxValueBytes);
      expect(job.returnvalue).toMatch(/^r+… \[cut: 1000000 bytes\]$/);
      expect(job.logCount).toBe(20);
      expect(job.logs.length).toBeGreaterThan(0);
      expect(job.logs.at(-1)).toMatch(/^19:l+… \[cut: 1000000 bytes\]$/); // newest last, cut
      expect(job.output.truncated).toBe(true);
      expect(job.output.chunks.length).toBeGreaterThan(0);
      expect(job.output.chunks[0].data).toMatch(/^0:o+… \[cut: 1000000 bytes\]$/);
      expect(job.cut).toBeGreaterThanOrEqual(4);
      expect(Number(res.headers['x-hopper-cut'])).toBe(job.cut);
    }
  });

  it.each(MOUNT_KINDS.filter((k) => k !== 'standalone'))(
    'a page of large jobs is bounded, each job keeping its id and state (%s mount)',
    async (kind) => {
      const name = env.queueName('page');
      await env.queue(name).addBulk(Array.from({ length: 50 }, (_, i) => ({ name: `n${i}`, data: { blob: 'x'.repeat(20_000) } })));
      const m = await start(kind, { limits: { maxResponseBytes: 64 * 1024, maxValueBytes: 8 * 1024 } });
      const res = await call(m, 'GET', `api/queues/${name}/jobs?state=waiting&limit=50`);
      expect(res.status).toBe(200);
      // The budget, plus each listed job's identity and empty shells (a few hundred bytes a job).
      expect(Buffer.byteLength(res.text)).toBeLessThan(64 * 1024 + 50 * 300);
      const page = res.json() as { jobs: { id: string; state: string; data: unknown }[] };
      expect(page.jobs.length).toBe(50);
      for (const job of page.jobs) {
        expect(job.id).toMatch(/^\d+$/);
        expect(job.state).toBe('waiting');
      }
      expect(JSON.stringify(page.jobs[0].data)).toContain('[cut: 20000 bytes]');
      expect(JSON.stringify(page.jobs[49].data)).toMatch(/\[cut/);
      expect(Number(res.headers['x-hopper-cut'])).toBeGreaterThanOrEqual(50);
    },
  );
});

describe.each(MOUNT_KINDS.filter((k) => k !== 'standalone'))('audit and bulk bounds (%s mount)', (kind) => {
  it('audits refused and failed actions, bulk ids and long details; caps refusals per caller per minute', async () => {
    const name = env.queueName('aud');
    const queue = env.queue(name);
    const ids = Array.from({ length: 1000 }, (_, i) => `job-${i}`);
    await queue.addBulk(ids.slice(0, 500).map((id) => ({ name: 'x', data: {}, opts: { jobId: id } })));
    const m = await start(kind);
    // A bulk removal of 1,000 ids, half of them missing: every id in the entry, the failures in a long detail.
    const bulk = await call(m, 'POST', `api/queues/${name}/bulk`, { action: 'remove', ids });
    expect(bulk.json()).toMatchObject({ done: 500 });
    expect((await call(m, 'POST', `api/queues/${name}/jobs/missing/remove`)).status).toBe(404);
    expect((await call(m, 'POST', `api/queues/${name}/pause`, undefined, VIEWER)).status).toBe(403);
    type Entry = { action: string; target: string; outcome: string; status: number; ids?: string[]; detail: string; unrecorded?: number };
    let log = (await call(m, 'GET', 'api/audit')).json() as Entry[];
    expect(log.map((e) => [e.action, e.outcome, e.status])).toEqual([
      ['pause', 'refused', 403],
      ['remove', 'failed', 404],
      ['bulk', 'done', 200],
    ]);
    expect(log[1]).toMatchObject({ target: `${name}/missing`, detail: expect.stringContaining('No job') as unknown });
    expect(log[2].ids).toEqual(ids);
    expect(log[2].detail.length).toBeGreaterThan(200);
    expect(log[2].detail).toMatch(/… \[cut: \d+ bytes\]$/);
    expect(Buffer.byteLength(log[2].detail)).toBeLessThanOrEqual(4096);
    // 40 more refusals in a minute: 30 recorded in all this minute, the rest counted on the next entry.
    for (let i = 0; i < 40; i++) expect((await call(m, 'POST', `api/queues/${name}/resume`, undefined, VIEWER)).status).toBe(403);
    expect((await call(m, 'POST', `api/queues/${name}/resume`)).status).toBe(200);
    expect((await call(m, 'POST', `api/queues/${name}/resume`, undefined, VIEWER)).status).toBe(403);
    log = (await call(m, 'GET', 'api/audit?limit=1000')).json() as Entry[];
    expect(log.filter((e) => e.outcome === 'refused').length).toBe(30);
    // The operator's own entry is recorded; the viewer's next recorded refusal (a minute later) will carry the count.
    expect(log[0]).toMatchObject({ action: 'resume', outcome: 'done' });
  });

  it('dead-letter replay: over 1,000 ids is a 400 and replays nothing; without ids, one bounded slice per request', async () => {
    const origin = env.queueName('o');
    const dlq = env.queueName('dl');
    env.queue(dlq);
    const source = env.queue(origin, { deadLetter: { queue: dlq } });
    await source.addBulk(Array.from({ length: 1200 }, (_, i) => ({ name: 'pay', data: { i }, opts: { jobId: `p${i}` } })));
    let healed = false;
    const worker = env.worker(
      origin,
      async () => {
        if (!healed) throw new Error('gateway down');
      },
      { concurrency: 50 },
    );
    await collect(worker, 'failed', 1200);
    healed = true;
    const m = await start(kind);
    const tooMany = await call(m, 'POST', `api/queues/${dlq}/dead-letters/replay`, {
      ids: Array.from({ length: 1001 }, (_, i) => `x${i}`),
    });
    expect(tooMany.status).toBe(400);
    expect((tooMany.json() as { error: string }).error).toMatch(/1 to 1,000/);
    expect((await env.queue(dlq).getJobCounts('waiting')).waiting).toBe(1200);
    const first = (await call(m, 'POST', `api/queues/${dlq}/dead-letters/replay`, {})).json() as {
      replayed: number;
      cursor: number | null;
      ids: string[];
    };
    expect(first.replayed).toBe(1000);
    expect(first.cursor).toBe(0); // the replayed ones left the list: go on from its start
    expect((await env.queue(dlq).getJobCounts('waiting')).waiting).toBe(200);
    const second = (await call(m, 'POST', `api/queues/${dlq}/dead-letters/replay`, { cursor: first.cursor })).json() as {
      replayed: number;
      cursor: number | null;
    };
    expect(second).toMatchObject({ replayed: 200, cursor: null });
    expect((await env.queue(dlq).getJobCounts('waiting')).waiting).toBe(0);
    await worker.close();
    expect((await call(m, 'POST', `api/queues/${dlq}/dead-letters/replay`, { scan: 5000 })).status).toBe(400);
    const log = (await call(m, 'GET', 'api/audit')).json() as { action: string; ids?: string[] }[];
    expect(log.filter((e) => e.action === 'replay' && e.ids && e.ids.length === 1000).length).toBe(1);
  });
});
