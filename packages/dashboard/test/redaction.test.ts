/**
 * Redaction as a property of the data path: the default names (accessKey, cookie,
 * connectionString, jwt, sessionId and the older ones), passwords inside URLs anywhere, nothing
 * deeper than 20 levels shown in clear, best-effort redaction of free text (URL passwords,
 * Bearer/Basic credentials, secret=value pairs) with a hook, and the same redaction on every
 * route: job lists and detail (data, options, progress, return value, failed reason, stack
 * traces, logs, steps, output), search (no oracle for a hidden value), dead letters, schedulers
 * and the audit log.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { useHopper } from '../../hopper/test/helpers/hopper.js';
import { collect } from '../../hopper/test/helpers/wait.js';
import { MAX_REDACT_DEPTH, defaultRedact, defaultRedactText, redactUrlPasswords, type DashboardOptions } from '../src/index.js';
import { Redactor, TOO_DEEP } from '../src/redaction.js';
import { MOUNT_KINDS, mount, type Mount, type MountKind, type RawResponse } from './helpers/mounts.js';

const env = useHopper();
const TOKEN = 'redaction-operator-token-01234';
const VIEWER = 'redaction-viewer-token-012345';
const mounts: Mount[] = [];
afterEach(async () => {
  for (const m of mounts.splice(0)) await m.close();
});

describe('the redaction rules', () => {
  const r = new Redactor();

  it('hides the default secret names, old and new, at any depth and in arrays', () => {
    const data = {
      accessKey: 'AKIA123',
      aws: { secretAccessKey: 'x', access_key_id: 'AKIA456' },
      headers: { Cookie: 'sid=1', 'Set-Cookie': 'sid=2', authorization: 'Bearer t' },
      db: { connectionString: 'Server=x;Password=y', connection_string: 'z' },
      jwt: 'eyJ...',
      session: { sessionId: 's-1', session_id: 's-2' },
      list: [{ password: 'p' }, { apiKey: 'k' }, { token: 't' }, { privateKey: 'pk' }, { credentials: { a: 1 } }],
      kept: { user: 'ada', region: 'eu', count: 3 },
    };
    const shown = JSON.stringify(r.value(data));
    for (const secret of [
      'AKIA123',
      'AKIA456',
      'sid=1',
      'sid=2',
      'Bearer t',
      'Password=y',
      '"z"',
      'eyJ',
      's-1',
      's-2',
      '"p"',
      '"k"',
      '"t"',
      'pk',
    ]) {
      expect([secret, shown.includes(secret)]).toEqual([secret, false]);
    }
    expect(r.value(data)).toMatchObject({ kept: { user: 'ada', region: 'eu', count: 3 } });
    expect(defaultRedact('sessionId', 'x', ['sessionId'])).toBe('[redacted]');
    expect(defaultRedact('region', 'eu', ['region'])).toBe('eu');
  });

  it('hides the password of a URL in any string value, whatever its field', () => {
    expect(r.value({ target: 'postgres://app:s3cret@db.internal:5432/main?ssl=1' })).toEqual({
      target: 'postgres://app:[redacted]@db.internal:5432/main?ssl=1',
    });
    expect(r.value(['redis://:pw0rd@cache:6379/0', 'amqp://u:p@mq/vh and https://ok.example/x'])).toEqual([
      'redis://:[redacted]@cache:6379/0',
      'amqp://u:[redacted]@mq/vh and https://ok.example/x',
    ]);
    for (const kept of ['https://user@example.com/', 'https://example.com/a:b@c', 'mailto:a@b', 'see http://x.example:8080/p'])
      expect(redactUrlPasswords(kept)).toBe(kept);
    // Linear: long values and many '://' cost milliseconds, not minutes.
    const started = performance.now();
    redactUrlPasswords('a'.repeat(2_000_000));
    redactUrlPasswords('x://'.repeat(200_000));
    redactUrlPasswords(`s://u:${'p'.repeat(1_000_000)}`);
    expect(performance.now() - started).toBeLessThan(2_000);
  });

  it(`hides what is nested deeper than ${MAX_REDACT_DEPTH} levels instead of showing it in clear`, () => {
    let deep: unknown = { value: 'the-deep-secret', password: 'also' };
    for (let i = 0; i < 30; i++) deep = { level: deep };
    const shown = JSON.stringify(r.value({ data: deep }));
    expect(shown).not.toContain('the-deep-secret');
    expect(shown).toContain(TOO_DEEP);
    // What is shallower is shown as before.
    expect(r.value({ a: { b: 'c' } })).toEqual({ a: { b: 'c' } });
  });

  it('redacts free text as well as it can (URL passwords, credentials, secret=value) and leaves ordinary words', () => {
    const cases: [string, string][] = [
      ['connect ECONNREFUSED postgres://app:s3cret@db/x', 'connect ECONNREFUSED postgres://app:[redacted]@db/x'],
      ['Authorization: Bearer abc.def.ghi', 'Authorization: Bearer [redacted]'],
      ['header Basic dXNlcjpwYXNz sent', 'header Basic [redacted] sent'],
      ['login with password=hunter2 failed', 'login with password=[redacted] failed'],
      ['{"apiKey":"k-123","n":1}', '{"apiKey":"[redacted]","n":1}'],
      ["db_password: 'x y'", "db_password: '[redacted] y'"],
      ['access_token=abc&x=1', 'access_token=[redacted]&x=1'],
      ['prompt tokens: 512, tests passed: 3, secrets rotated', 'prompt tokens: 512, tests passed: 3, secrets rotated'],
    ];
    for (const [text, shown] of cases) expect(defaultRedactText(text, 'log')).toBe(shown);
    const started = performance.now();
    defaultRedactText('password'.repeat(100_000), 'log');
    defaultRedactText(`${'token='.repeat(50_000)}x`, 'log');
    defaultRedactText(`Bearer ${'a'.repeat(500_000)}`, 'log');
    expect(performance.now() - started).toBeLessThan(2_000);
  });
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
  const res = await m.send({
    method,
    target: `${m.basePath}${path}`,
    headers: { host: m.host, authorization: `Bearer ${token}`, ...(method === 'POST' ? { 'x-hopper-csrf': '1' } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return res as RawResponse;
}

describe.each(MOUNT_KINDS.filter((k) => k !== 'standalone'))('redaction on every route (%s mount)', (kind) => {
  it('search matches what the viewer sees: a redacted value cannot be found, guessed or confirmed', async () => {
    const name = env.queueName('oracle');
    const queue = env.queue(name);
    await queue.add('sync', { apiKey: 'k-5f3a9c', region: 'eu-west', url: 'https://u:pa55w0rd@api.example/x' }, { jobId: 'j1' });
    await queue.add('other', { note: 'nothing here' }, { jobId: 'j2' });
    const m = await start(kind);
    const search = async (q: string, field = 'any') => {
      const res = await call(m, 'GET', `api/queues/${name}/search?q=${encodeURIComponent(q)}&field=${field}`, undefined, VIEWER);
      expect(res.status).toBe(200);
      return (res.json() as { jobs: { id: string }[] }).jobs.map((j) => j.id);
    };
    // Every prefix of the secret: no hit (the review recovered an apiKey in ~500 such searches).
    for (const q of ['k-5', 'k-5f3a', 'k-5f3a9c', '5f3a9c', 'pa55', 'pa55w0rd']) {
      expect([q, await search(q)]).toEqual([q, []]);
      expect([q, await search(q, 'data')]).toEqual([q, []]);
    }
    expect(await search('eu-west', 'data')).toEqual(['j1']); // what is shown is searchable
    expect(await search('apiKey', 'data')).toEqual(['j1']);
    expect(await search('j1', 'id')).toEqual(['j1']);
  });

  it('every view of a job, the dead letters, the schedulers and the audit log are redacted', async () => {
    const origin = env.queueName('src');
    const dlq = env.queueName('dlq');
    env.queue(dlq);
    const queue = env.queue(origin, { deadLetter: { queue: dlq } });
    await queue.add(
      'charge',
      { card: { accessKey: 'AKIA-DATA' }, dsn: 'mysql://root:toor@db/x' },
      { jobId: 'c1', attempts: 1, removeOnFail: false },
    );
    const worker = env.worker(origin, async (job) => {
      await job.log('calling with password=log-secret');
      await job.updateProgress({ step: 1, cookie: 'sid=progress-secret' });
      await job.stream.write('text out: Bearer out-secret-token');
      await job.stream.write({ sessionId: 'stream-secret' });
      await job.step('charge', async () => ({ token: 'step-secret' }));
      throw new Error('declined for https://bank:reason-secret@gateway.example');
    });
    await collect(worker, 'failed', 1);
    await worker.close();
    await queue.upsertJobScheduler('nightly', { every: 60_000 }, { name: 'n', data: { jwt: 'eyJhbGci.sched' } });
    const m = await start(kind);
    const replies = [
      await call(m, 'GET', `api/queues/${origin}/jobs?state=failed`),
      await call(m, 'GET', `api/queues/${origin}/jobs/c1`),
      await call(m, 'GET', `api/queues/${dlq}/dead-letters?state=waiting`),
      await call(m, 'GET', `api/queues/${origin}/schedulers`),
    ];
    // The dead-letter reason filter cannot be used to guess either.
    const guess = await call(m, 'GET', `api/queues/${dlq}/dead-letters?state=waiting&reason=reason-secret`);
    expect((guess.json() as { jobs: unknown[] }).jobs).toEqual([]);
    const detail = replies[1].json() as Record<string, unknown>;
    expect(detail).toMatchObject({ data: { card: { accessKey: '[redacted]' }, dsn: 'mysql://root:[redacted]@db/x' } });
    expect(detail.logs).toEqual(['calling with password=[redacted]']);
    expect((replies[2].json() as { jobs: unknown[] }).jobs.length).toBe(1);
    // Audit: a cancel reason with a secret in it.
    await call(m, 'POST', `api/queues/${origin}/jobs/c1/cancel`, { reason: 'rotated: apiKey=audit-secret' });
    replies.push(await call(m, 'GET', 'api/audit'));
    for (const res of replies) {
      expect(res.status).toBe(200);
      for (const secret of [
        'AKIA-DATA',
        'toor',
        'log-secret',
        'progress-secret',
        'out-secret-token',
        'stream-secret',
        'step-secret',
        'reason-secret',
        'eyJhbGci',
        'audit-secret',
      ])
        expect([secret, res.text.includes(secret)]).toEqual([secret, false]);
    }
  });

  it('the hooks: your own rule for fields (redact) and for free text (redactText) apply everywhere, search included', async () => {
    const name = env.queueName('hooks');
    const queue = env.queue(name);
    await queue.add('mail', { email: 'ada@example.com', subject: 'hi' }, { jobId: 'm1' });
    await queue.addJobLog('m1', 'sent to customer ssn-123-45-6789');
    const m = await start(kind, {
      redact: (key, value) => (key === 'email' ? '[email]' : defaultRedact(key, value, [key])),
      redactText: (text, field) => defaultRedactText(text, field).replace(/ssn-[\d-]+/g, '[ssn]'),
    });
    const job = await call(m, 'GET', `api/queues/${name}/jobs/m1`);
    expect(job.json()).toMatchObject({ data: { email: '[email]', subject: 'hi' }, logs: ['sent to customer [ssn]'] });
    const found = await call(m, 'GET', `api/queues/${name}/search?q=ada%40example&field=data`);
    expect((found.json() as { jobs: unknown[] }).jobs).toEqual([]);
  });
});
