import { describe, expect, it } from 'vitest';
import { useHopper } from '../../hopper/test/helpers/hopper.js';
import { collect } from '../../hopper/test/helpers/wait.js';
import { hopper, hopperInTerminal, hopperWithEnv, json } from './run-cli.js';

const env = useHopper();
const cli = (...args: string[]) => hopper(env.url, env.prefix, ...args);

/** A queue with one completed, one failed (dead-lettered), one delayed and one waiting job. */
async function seed(): Promise<{ name: string; dlq: string }> {
  const name = env.queueName('emails');
  const dlq = env.queueName('dlq');
  const queue = env.queue(name);
  await env.queue(dlq).waitUntilReady();
  await queue.add('welcome', { to: 'a' });
  await queue.add('bad', { to: 'b' }, { deadLetter: { queue: dlq } });
  const worker = env.worker(name, async (job) => {
    if (job.name === 'bad') throw new Error('invalid address');
    return 'sent';
  });
  await Promise.all([collect(worker, 'completed', 1), collect(worker, 'failed', 1)]);
  await worker.close();
  await queue.add('later', { to: 'c' }, { delay: 3_600_000, jobId: 'later-1' });
  await queue.add('now', { to: 'd' }, { jobId: 'now-1' });
  return { name, dlq };
}

interface Overview {
  name: string;
  paused: boolean;
  counts: Record<string, number>;
  oldestWaitingMs: number | null;
}

describe('hopper CLI', () => {
  it('on a prefix with no queue, names it and the prefixes that hold queues (HOPPER_PREFIX too)', async () => {
    const somewhere = env.queueName('somewhere');
    await env.queue(somewhere).waitUntilReady();
    const empty = `${env.prefix}-empty`;
    const result = await hopper(env.url, empty, 'queues');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`No queue under the prefix "${empty}".`);
    expect(result.stdout).toMatch(new RegExp(`Prefixes with queues here: .*${env.prefix} \\(\\d+ queues?\\)`));
    expect(result.stdout).not.toContain(`${empty} (`);
    // HOPPER_PREFIX chooses the prefix when --prefix is not given.
    const viaEnv = await hopperWithEnv(env.url, { HOPPER_PREFIX: env.prefix }, 'queues', '--json');
    expect(json<Overview[]>(viaEnv).map((q) => q.name)).toContain(somewhere);
  });

  it('lists queues with their counts, as a table and as JSON', async () => {
    const { name, dlq } = await seed();
    const queues = json<Overview[]>(await cli('queues', '--json'));
    const q = queues.find((x) => x.name === name);
    expect(q?.counts).toMatchObject({ waiting: 1, delayed: 1, completed: 1, failed: 1, active: 0 });
    expect(q?.paused).toBe(false);
    expect(q?.oldestWaitingMs).not.toBeNull();
    expect(queues.map((x) => x.name)).toContain(dlq);
    const text = await cli('queues');
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^QUEUE\s+STATE\s+WAITING/);
    expect(text.stdout).toContain(name);
  });

  it('lists, shows, retries, promotes, cancels and removes jobs', async () => {
    const { name } = await seed();
    const failed = json<{ id: string; failedReason: string }[]>(await cli('jobs', 'list', name, '--state', 'failed', '--json'));
    expect(failed).toHaveLength(1);
    expect(failed[0].failedReason).toBe('invalid address');

    const shown = json<{ state: string; data: unknown }>(await cli('jobs', 'show', name, failed[0].id, '--json'));
    expect(shown).toMatchObject({ state: 'failed', data: { to: 'b' } });

    expect((await cli('jobs', 'retry', name, failed[0].id)).code).toBe(0);
    expect(await env.queue(name).getJobState(failed[0].id)).toBe('waiting');

    expect((await cli('jobs', 'promote', name, 'later-1')).code).toBe(0);
    expect(await env.queue(name).getJobState('later-1')).toBe('waiting');

    const cancelled = await cli('jobs', 'cancel', name, 'now-1', '--reason', 'operator');
    expect(cancelled.code).toBe(0);
    const job = await env.queue(name).getJob('now-1');
    expect(await job?.getState()).toBe('failed');
    expect(job?.failedReason).toContain('operator');

    // Destructive: refused without a terminal unless --yes, and nothing changes.
    const refused = await cli('jobs', 'remove', name, 'now-1');
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('--yes');
    expect(await env.queue(name).getJob('now-1')).toBeDefined();
    expect((await cli('jobs', 'remove', name, 'now-1', '--yes')).code).toBe(0);
    expect(await env.queue(name).getJob('now-1')).toBeUndefined();

    // One missing id among several: the others are done, the exit code says something failed.
    const mixed = await cli('jobs', 'retry', name, 'missing-id', '--json');
    expect(mixed.code).toBe(1);
    expect(JSON.parse(mixed.stdout)).toEqual([{ id: 'missing-id', ok: false, result: expect.stringContaining('No job') as unknown }]);
  });

  it('pages through jobs with --offset and --limit', async () => {
    const name = env.queueName();
    await env.queue(name).addBulk(Array.from({ length: 30 }, (_, i) => ({ name: 'n', data: { i }, opts: { jobId: `j${i}` } })));
    const first = json<{ id: string }[]>(await cli('jobs', 'list', name, '--state', 'waiting', '--limit', '10', '--json'));
    const second = json<{ id: string }[]>(
      await cli('jobs', 'list', name, '--state', 'waiting', '--limit', '10', '--offset', '10', '--json'),
    );
    expect(first).toHaveLength(10);
    expect(second).toHaveLength(10);
    expect(new Set([...first, ...second].map((j) => j.id)).size).toBe(20);
  });

  it('lists and replays dead letters', async () => {
    const { name, dlq } = await seed();
    const letters = json<{ originQueue: string; failedReason: string }[]>(await cli('dlq', 'list', dlq, '--json'));
    expect(letters).toEqual([expect.objectContaining({ originQueue: name, failedReason: 'invalid address' })]);
    const replayed = json<{ replayed: number }>(await cli('dlq', 'replay', dlq, '--yes', '--json'));
    expect(replayed.replayed).toBe(1);
    expect(json<unknown[]>(await cli('dlq', 'list', dlq, '--json'))).toEqual([]);
    expect((await env.queue(name).getJobCounts('failed')).failed).toBe(0);
  });

  it('lists, previews, pauses, resumes and triggers job schedulers', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    await queue.upsertJobScheduler('digest', { pattern: '0 7 * * *', tz: 'Europe/Paris' }, { name: 'digest' });
    const list = json<{ key: string; pattern: string }[]>(await cli('schedulers', 'list', name, '--json'));
    expect(list).toEqual([expect.objectContaining({ key: 'digest', pattern: '0 7 * * *' })]);

    const preview = json<{ next: { utc: string; local: string }[] }>(
      await cli('schedulers', 'preview', name, 'digest', '--count', '3', '--json'),
    );
    expect(preview.next).toHaveLength(3);
    for (const run of preview.next) expect(run.local).toMatch(/ 07:00:00$/);

    expect((await cli('schedulers', 'pause', name, 'digest')).code).toBe(0);
    expect((await queue.getJobSchedulerState('digest'))?.paused).toBe(true);
    expect((await cli('schedulers', 'resume', name, 'digest')).code).toBe(0);
    expect((await queue.getJobSchedulerState('digest'))?.paused).toBe(false);

    const triggered = json<{ jobId: string }>(await cli('schedulers', 'trigger', name, 'digest', '--json'));
    expect(await queue.getJob(triggered.jobId)).toBeDefined();

    const missing = await cli('schedulers', 'preview', name, 'nope');
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('No job scheduler "nope"');
  });

  it('pauses, resumes, cleans and drains a queue', async () => {
    const { name } = await seed();
    expect((await cli('pause', name)).code).toBe(0);
    expect(await env.queue(name).isPaused()).toBe(true);
    expect((await cli('resume', name)).code).toBe(0);
    expect(await env.queue(name).isPaused()).toBe(false);

    const cleaned = json<{ removed: number }>(await cli('clean', name, '--state', 'completed', '--yes', '--json'));
    expect(cleaned.removed).toBe(1);

    expect((await cli('drain', name)).code).toBe(2); // no terminal, no --yes: refused
    expect((await env.queue(name).getJobCounts('waiting')).waiting).toBe(1);
    expect((await cli('drain', name, '--delayed', '--yes')).code).toBe(0);
    expect(await env.queue(name).getJobCounts('waiting', 'delayed')).toEqual({ waiting: 0, delayed: 0 });
  });

  it('doctor prints findings with evidence and fix, and exits 1 on errors (2 with a bad threshold)', async () => {
    const name = env.queueName();
    await env.queue(name).add('plain', {});
    const report = await cli('doctor', name);
    expect(report.code).toBe(1); // a job waits and no worker runs
    expect(report.stdout).toMatch(/ERROR\s+\S+: Jobs wait and no worker is running {2}\[no-workers\]/);
    expect(report.stdout).toContain('fix: Start a Worker');
    const asJson = await cli('doctor', name, '--json');
    const parsed = JSON.parse(asJson.stdout) as { findings: { check: string; queue?: string }[] };
    expect(parsed.findings.filter((f) => f.queue === name).map((f) => f.check)).toContain('jobs-without-retries');
    expect((await cli('doctor', '--oldest', 'soon')).code).toBe(2);
  });

  it('top shows live throughput per queue, redrawn in place in a terminal', async () => {
    const name = env.queueName('busy');
    const queue = env.queue(name);
    await queue.addBulk(Array.from({ length: 20 }, (_, i) => ({ name: 'n', data: { i } })));
    // Jobs keep completing while top watches: each one adds the next.
    let added = 20;
    const worker = env.worker(name, async () => {
      if (added < 2000) {
        added++;
        await queue.add('n', {});
      }
    });
    await collect(worker, 'completed', 5);
    const result = await hopperInTerminal(env.url, env.prefix, 'top', '--interval', '300ms', '--iterations', '3');
    await worker.close();
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('\x1b[2J'); // redrawn in place
    expect(result.stdout.match(/hopper top /g)).toHaveLength(3);
    const row = result.stdout.split(/\r?\n/).find((line) => line.startsWith(name));
    expect(row).toBeDefined();
    const donePerSec = Number(row?.trim().split(/\s+/)[2]);
    expect(donePerSec).toBeGreaterThan(0);
    const frames = await cli('top', name, '--interval', '200ms', '--iterations', '2', '--json');
    expect(frames.code).toBe(0);
    expect(frames.stdout).not.toContain('\x1b[');
    const lines = frames.stdout.trim().split('\n');
    expect(lines).toHaveLength(2);
    for (const line of lines) expect((JSON.parse(line) as { queues: { name: string }[] }).queues.map((q) => q.name)).toEqual([name]);
  });

  it('never creates a queue: an unknown name fails with the known ones, and changes nothing', async () => {
    const { name } = await seed();
    const result = await cli('jobs', 'list', 'no-such-queue');
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('No queue named "no-such-queue"');
    expect(result.stderr).toContain(name);
    const names = json<Overview[]>(await cli('queues', '--json')).map((q) => q.name);
    expect(names).not.toContain('no-such-queue');
  });

  it('explains usage mistakes with exit code 2', async () => {
    const unknown = await cli('frobnicate');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('unknown command "frobnicate"');
    const group = await cli('jobs');
    expect(group.code).toBe(2);
    expect(group.stderr).toContain('needs a subcommand: list, show, retry, remove, promote, cancel');
    const badFlag = await cli('queues', '--frob');
    expect(badFlag.code).toBe(2);
    expect(badFlag.stderr).toContain('Usage: hopper queues');
    const badState = await cli('jobs', 'list', 'x', '--state', 'done');
    expect(badState.code).toBe(2);
    expect(badState.stderr).toContain('not a job state');
    const help = await cli('--help');
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('hopper: inspect and operate Hopper queues.');
  });

  it('refuses a --redis or --prefix it cannot use, and a db the server lacks instead of showing db 0 (issue 34)', async () => {
    const name = env.queueName();
    await env.queue(name).add('x', {});
    const notUrl = await hopper('42', env.prefix, 'queues');
    expect(notUrl.code).toBe(2);
    expect(notUrl.stderr).toContain('--redis (or REDIS_URL): connection must be');
    const prefix = await hopper(env.url, 'a:{b}', 'queues');
    expect(prefix.code).toBe(2);
    expect(prefix.stderr).toContain('--prefix:');
    const url = new URL(env.url);
    url.pathname = '/99';
    const db99 = await hopper(url.toString(), env.prefix, 'queues', '--json');
    expect(db99.code).toBe(1);
    expect(db99.stderr).toContain('connection.db must be a database this Redis server has, got 99');
    expect(db99.stdout).not.toContain(name);
    const interval = await cli('top', '--interval', '30d');
    expect(interval.code).toBe(2);
    expect(interval.stderr).toContain('--interval must be at most');
    const count = await cli('jobs', 'list', name, '--limit', '1e3');
    expect(count.code).toBe(2);
  });
});
