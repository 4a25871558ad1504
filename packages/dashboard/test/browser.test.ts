/**
 * The web UI driven in Debian's Chromium (playwright-core, never a downloaded browser): sign in,
 * find a queue, open a failed job, retry it and see it complete; cancel a running job (its signal
 * aborts); live counts; search; pause a queue; replay dead letters; trigger a scheduler; and
 * hostile payloads in every field shown in every view without any of them running. Each view is
 * rendered to a screenshot, saved to docs/screenshots/ only on request (`npm run screenshots`, which
 * sets HOPPER_SCREENSHOTS=1): a test run never rewrites tracked files.
 *
 * Chromium missing is a failure with the command that installs it (never a skip).
 */
import { existsSync, mkdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import express from 'express';
import Fastify from 'fastify';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { useHopper } from '../../hopper/test/helpers/hopper.js';
import { collect } from '../../hopper/test/helpers/wait.js';
import { createDashboard, fastifyDashboard, toNodeListener } from '../src/index.js';

// The page's globals as the callbacks run in the browser use them (this file compiles without the DOM lib).
interface PageElement {
  textContent: string | null;
  hasAttribute(name: string): boolean;
  getAttribute(name: string): string | null;
}
declare const document: {
  querySelector(selector: string): PageElement | null;
  querySelectorAll(selector: string): ArrayLike<PageElement> & Iterable<PageElement>;
  addEventListener(type: string, listener: (event: { violatedDirective: string; blockedURI: string }) => void): void;
};
declare const window: unknown;
declare const sessionStorage: { getItem(key: string): string | null; setItem(key: string, value: string): void };

const CHROMIUM = process.env.HOPPER_CHROMIUM ?? '/usr/bin/chromium';
const SHOTS = fileURLToPath(new URL('../../../docs/screenshots/', import.meta.url));
/** Whether screenshots are written to docs/screenshots/ (`npm run screenshots`); otherwise they are rendered and dropped. */
const SAVE_SHOTS = process.env.HOPPER_SCREENSHOTS === '1';
const TOKEN = 'browser-token-0123456789abc';
const env = useHopper();
let browser: Browser | undefined;
const closers: (() => Promise<void>)[] = [];

/** The browser, launched by the first test; with Chromium missing every test fails (none is skipped) saying how to install it. */
async function launch(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `The browser tests need Chromium at ${CHROMIUM} and it is not there. Install Debian's: ` +
        '`apt-get update && apt-get install -y chromium` (or set HOPPER_CHROMIUM to a Chromium binary). The tests never download a browser.',
    );
  }
  if (SAVE_SHOTS) mkdirSync(SHOTS, { recursive: true });
  browser ??= await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-gpu'] });
  return browser;
}
afterAll(async () => {
  await browser?.close();
});
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

/** The dashboard in Express under /ops/hopper/ (or Fastify under /admin/queues/); returns the UI's URL. */
async function serve(kind: 'express' | 'fastify' = 'express'): Promise<string> {
  const basePath = kind === 'express' ? '/ops/hopper/' : '/admin/queues/';
  const dashboard = createDashboard({
    connection: env.url,
    prefix: env.prefix,
    basePath,
    auth: { tokens: [{ token: TOKEN, name: 'ops' }] },
    streamIntervalMs: 300,
  });
  closers.push(() => dashboard.close());
  if (kind === 'fastify') {
    const app = Fastify();
    await app.register(fastifyDashboard(dashboard), { prefix: basePath.slice(0, -1) });
    await app.listen({ port: 0, host: '127.0.0.1' });
    closers.push(() => app.close());
    return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}${basePath}`;
  }
  const app = express();
  app.use(basePath.slice(0, -1), toNodeListener(dashboard));
  const server: Server = createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}${basePath}`;
}

interface Traps {
  dialogs: string[];
  errors: string[];
}

/** A page with traps: any dialog, page error or CSP violation is recorded; signed in unless `signedIn` is false. */
async function open(signedIn = true): Promise<{ page: Page; traps: Traps }> {
  const context = await (await launch()).newContext({ viewport: { width: 1280, height: 860 } });
  closers.push(() => context.close());
  const page = await context.newPage();
  const traps: Traps = { dialogs: [], errors: [] };
  page.on('dialog', (dialog) => {
    traps.dialogs.push(dialog.message());
    void dialog.dismiss();
  });
  page.on('pageerror', (error) => traps.errors.push(error.message));
  await page.addInitScript(
    (token) => {
      const w = window as { __csp: string[] };
      w.__csp = [];
      document.addEventListener('securitypolicyviolation', (e) => w.__csp.push(`${e.violatedDirective} ${e.blockedURI}`));
      if (token) sessionStorage.setItem('hopper.dashboard.auth', `Bearer ${token}`);
    },
    signedIn ? TOKEN : '',
  );
  return { page, traps };
}

const shot = (page: Page, name: string) => page.screenshot({ path: SAVE_SHOTS ? `${SHOTS}${name}.png` : undefined, fullPage: false });
/** Clicks a button that asks for confirmation, then confirms. */
async function confirmClick(page: Page, testId: string): Promise<void> {
  await page.getByTestId(testId).first().click();
  await page.getByTestId('confirm-ok').click();
}

describe('dashboard in the browser', () => {
  it('signs in, finds a queue, opens a failed job, retries it and sees it complete; counts update live', async () => {
    const emails = env.queueName('emails');
    const reports = env.queueName('reports');
    const queue = env.queue(emails);
    await env.queue(reports).addBulk(Array.from({ length: 40 }, (_, i) => ({ name: 'monthly', data: { i } }))); // no worker: in trouble
    await queue.addBulk(Array.from({ length: 30 }, (_, i) => ({ name: 'newsletter', data: { i } })));
    await queue.add('welcome', { to: 'ada@example.com', password: 'hunter2' }, { jobId: 'welcome-1' });
    let healed = false;
    const worker = env.worker(emails, async (job) => {
      await job.log(`sending to ${(job.data as { to?: string }).to ?? 'list'}`);
      if (job.name === 'welcome' && !healed) throw new Error('SMTP 451: try again later');
      return { delivered: true };
    });
    await collect(worker, 'failed', 1);
    const base = await serve('express');

    const { page, traps } = await open(false);
    await page.goto(base);
    await page.getByTestId('login-token').fill(TOKEN);
    await shot(page, 'login');
    await page.getByTestId('login-go').click();
    const card = page.locator(`[data-testid=queue-card][data-queue="${reports}"]`);
    await card.getByTestId('trouble').waitFor();
    expect(await card.getByTestId('trouble').textContent()).toContain('no worker');
    await page.locator('.live.up').waitFor();
    // Live: a job added now shows up without a reload.
    const before = await card.locator('.count.waiting b').textContent();
    await env.queue(reports).add('monthly', { late: true });
    await page.waitForFunction(([name, old]) => document.querySelector(`[data-queue="${name}"] .count.waiting b`)?.textContent !== old, [
      reports,
      before,
    ] as const);
    await page.locator(`[data-queue="${emails}"] canvas`).first().waitFor();
    await shot(page, 'overview');

    await page.locator(`[data-queue="${emails}"]`).getByTestId('queue-link').click();
    await page.getByTestId('state-failed').click();
    await page.locator('[data-testid=job-row][data-id="welcome-1"]').waitFor();
    await shot(page, 'queue-failed');
    await page.locator('[data-testid=job-row][data-id="welcome-1"]').getByTestId('job-link').click();
    await page.getByTestId('failed-reason').waitFor();
    expect(await page.getByTestId('failed-reason').textContent()).toBe('SMTP 451: try again later');
    expect(await page.getByTestId('job-data').textContent()).toContain('[redacted]');
    await shot(page, 'job-failed');

    healed = true;
    const completed = collect(worker, 'completed', 1);
    await confirmClick(page, 'job-retry');
    await completed;
    await page.reload();
    await page.waitForFunction(() => document.querySelector('[data-testid=job-state]')?.textContent === 'completed');
    expect(await page.getByTestId('job-return').textContent()).toContain('"delivered": true');
    await shot(page, 'job-completed');
    expect(await queue.getJobState('welcome-1')).toBe('completed');
    await page.getByTestId('nav-audit').click();
    await page.locator('[data-testid=audit-row]').first().waitFor();
    expect(await page.locator('[data-testid=audit-row]').first().textContent()).toContain('retry');
    await shot(page, 'audit');
    expect(traps).toEqual({ dialogs: [], errors: [] });
    expect(await page.evaluate(() => (window as { __csp: string[] }).__csp)).toEqual([]);
  });

  it("cancels a running job from its page: the processor's signal aborts and the job ends failed as cancelled", async () => {
    const name = env.queueName('generation');
    const queue = env.queue(name);
    let aborted: unknown;
    const worker = env.worker(name, async (_job, _token, signal) => {
      await new Promise((_resolve, reject) => {
        signal!.addEventListener('abort', () => {
          aborted = signal!.reason;
          reject(signal!.reason as Error);
        });
      });
    });
    const active = collect(worker, 'active', 1);
    await queue.add('turn', { prompt: 'write a poem' }, { jobId: 'turn-1' });
    await active;
    const base = await serve('express');
    const { page, traps } = await open();
    await page.goto(`${base}#/q/${name}/job/turn-1`);
    await page.waitForFunction(() => document.querySelector('[data-testid=job-state]')?.textContent === 'active');
    const failed = collect<[{ id?: string } | undefined, Error]>(worker, 'failed', 1);
    await confirmClick(page, 'job-cancel');
    const [[job, error]] = await failed;
    expect(error.name).toBe('CancelledError');
    expect(aborted).toBeDefined();
    expect(job?.id).toBe('turn-1');
    await page.waitForFunction(() => document.querySelector('[data-testid=job-state]')?.textContent === 'failed');
    expect(await queue.getJobState('turn-1')).toBe('failed');
    expect(traps).toEqual({ dialogs: [], errors: [] });
  });

  it('searches a queue with progress, bulk-selects the results, and pauses the queue (mounted in Fastify)', async () => {
    const name = env.queueName('orders');
    const queue = env.queue(name);
    await queue.addBulk(
      Array.from({ length: 3000 }, (_, i) => ({
        name: i % 500 === 3 ? 'refund' : 'order',
        data: { sku: `SKU-${i}`, note: i === 1234 ? 'gift wrap' : '' },
      })),
    );
    const base = await serve('fastify');
    const { page, traps } = await open();
    await page.goto(`${base}#/q/${name}`);
    await page.getByTestId('search-input').fill('gift wrap');
    await page.getByTestId('search-field').selectOption('data');
    await page.getByTestId('search-go').click();
    await page.waitForFunction(() =>
      /3000 of 3000 waiting jobs searched$/.test(document.querySelector('[data-testid=search-status]')?.textContent ?? ''),
    );
    expect(await page.getByTestId('search-status').textContent()).toMatch(/^1 found/);
    await page.getByTestId('search-input').fill('refund');
    await page.getByTestId('search-field').selectOption('name');
    await page.getByTestId('search-go').click();
    await page.waitForFunction(() =>
      /^6 found, 3000 of 3000/.test(document.querySelector('[data-testid=search-status]')?.textContent ?? ''),
    );
    expect(await page.getByTestId('search-results').locator('[data-testid=job-row]').count()).toBe(6);
    await shot(page, 'search');
    // Bulk action on the search result: remove the 6 refunds.
    await page.getByTestId('search-results').getByTestId('bulk-remove').click();
    await page.getByTestId('confirm-ok').click();
    await page.getByTestId('toast').first().waitFor();
    expect(await queue.count()).toBe(2994);

    await confirmClick(page, 'pause-queue');
    await page.getByTestId('paused-badge').waitFor();
    expect(await queue.isPaused()).toBe(true);
    await shot(page, 'queue-paused');
    // The page's per-state counts follow the live stream.
    await queue.add('order', { late: true });
    await page.waitForFunction(() => document.querySelector('[data-testid=state-waiting]')?.textContent === 'waiting (2995)');
    expect(traps).toEqual({ dialogs: [], errors: [] });
  });

  it('replays dead letters, triggers a scheduler, shows groups and settings', async () => {
    const origin = env.queueName('payments');
    const dlq = env.queueName('payments-dlq');
    env.queue(dlq);
    const source = env.queue(origin, { deadLetter: { queue: dlq } });
    await source.addBulk([1, 2, 3].map((i) => ({ name: 'charge', data: { i }, opts: { jobId: `c${i}`, group: { id: `tenant-${i}` } } })));
    let healed = false;
    const worker = env.worker(origin, async () => {
      if (!healed) throw new Error('gateway timeout');
      return 'charged';
    });
    await collect(worker, 'failed', 3);
    await source.upsertJobScheduler('nightly-settlement', { pattern: '0 3 * * *', tz: 'Europe/Paris' }, { name: 'settle', data: {} });
    const base = await serve('express');
    const { page, traps } = await open();

    await page.goto(`${base}#/q/${dlq}/dead-letters`);
    await page.locator('[data-testid=dl-row]').nth(2).waitFor();
    await shot(page, 'dead-letters');
    healed = true;
    const replayed = collect(worker, 'completed', 3);
    await confirmClick(page, 'dl-replay');
    await replayed;
    await page.waitForFunction(() => document.querySelector('[data-testid=dl-count]')?.textContent?.startsWith('0 dead'));
    expect(await source.getJobState('c1')).toBe('completed');

    await page.goto(`${base}#/q/${origin}/schedulers`);
    await page.locator('[data-testid=scheduler-row] .preview div').nth(2).waitFor();
    const before = await source.getJobSchedulerState('nightly-settlement');
    await confirmClick(page, 'scheduler-trigger');
    await page.getByTestId('toast').first().waitFor();
    const after = await source.getJobSchedulerState('nightly-settlement');
    expect(after!.fired).toBe(before!.fired + 1);
    await shot(page, 'schedulers');

    await worker.close();
    await source.addBulk([1, 2, 3].map((i) => ({ name: 'charge', data: { i }, opts: { group: { id: `tenant-${i}` } } })));
    await source.pauseGroup('tenant-2');
    await page.goto(`${base}#/q/${origin}/groups`);
    await page.locator('[data-testid=group-row]').nth(2).waitFor();
    await shot(page, 'groups');
    await page.goto(`${base}#/q/${origin}/settings`);
    await page.getByTestId('set-concurrency').fill('3');
    await confirmClick(page, 'settings-save');
    await page.getByTestId('toast').first().waitFor();
    expect(await source.getGlobalConcurrency()).toBe(3);
    await shot(page, 'settings');
    expect(traps).toEqual({ dialogs: [], errors: [] });
  });

  it('shows hostile names, ids, data, errors, logs, results, schedulers and groups as text: nothing runs', async () => {
    const payloads = [
      '<img src=x onerror="window.__xss=1;alert(1)">',
      '</script><script>window.__xss=2;alert(2)</script>',
      'javascript:window.__xss=3',
      '<svg/onload=window.__xss=4>',
      '"><iframe srcdoc="<script>parent.__xss=5</script>">',
    ];
    const name = '<svg/onload=window.__xss=6>';
    const queue = env.queue(name);
    const dlq = env.queueName('dlq');
    env.queue(dlq);
    const hostileQueue = env.queue(env.queueName('h'), { deadLetter: { queue: dlq } });
    await queue.addBulk(
      payloads.map((p, i) => ({ name: p, data: { html: p, link: p, nested: { [p]: p } }, opts: { jobId: `x${i}${p}` } })),
    );
    await queue.upsertJobScheduler(payloads[0], { every: 60_000 }, { name: payloads[1], data: { p: payloads[2] } });
    await hostileQueue.add(payloads[0], { p: payloads[1] }, { jobId: 'dl-src', group: { id: payloads[3] } });
    const worker = env.worker(name, async (job) => {
      await job.log(payloads.join(' '));
      await job.updateProgress({ text: payloads[4] });
      if (job.id!.startsWith('x0') || job.id!.startsWith('x1')) throw new Error(payloads.join('\n'));
      return { html: payloads[0], script: payloads[1] };
    });
    const w2 = env.worker(hostileQueue.name, async () => {
      throw new Error(payloads[2]);
    });
    // A waiting job in a hostile group, for the groups view.
    await hostileQueue.add('idle', {}, { group: { id: payloads[4] }, delay: 0 });
    await Promise.all([collect(worker, 'failed', 2), collect(w2, 'failed', 1)]);
    const base = await serve('express');
    const { page, traps } = await open();
    // The audit log gets hostile targets too.
    await page.goto(base);
    await page.locator(`[data-testid=queue-card]`).first().waitFor();
    await page.evaluate(
      async ([queueName, id]) => {
        const auth = sessionStorage.getItem('hopper.dashboard.auth')!;
        await fetch(`api/queues/${encodeURIComponent(queueName)}/jobs/${encodeURIComponent(id)}/duplicate`, {
          method: 'POST',
          headers: { authorization: auth, 'x-hopper-csrf': '1' },
        });
      },
      [name, `x2${payloads[2]}`] as const,
    );
    const q = encodeURIComponent(name);
    const views = [
      '#/',
      `#/q/${q}?state=waiting`,
      `#/q/${q}?state=failed`,
      `#/q/${q}?state=completed`,
      ...payloads.map((p, i) => `#/q/${q}/job/${encodeURIComponent(`x${i}${p}`)}`),
      `#/q/${q}/schedulers`,
      `#/q/${encodeURIComponent(hostileQueue.name)}/groups`,
      `#/q/${encodeURIComponent(dlq)}/dead-letters`,
      `#/q/${q}/settings`,
      '#/audit',
    ];
    for (const view of views) {
      await page.goto(`${base}${view}`);
      await page.waitForFunction(
        () => document.querySelector('main')?.getAttribute('data-ready') === (window as { location: { hash: string } }).location.hash,
      );
    }
    // Search results render the same payloads.
    await page.goto(`${base}#/q/${q}?state=failed`);
    await page.getByTestId('search-input').fill('onerror');
    await page.getByTestId('search-go').click();
    await page.getByTestId('search-results').locator('[data-testid=job-row]').first().waitFor();
    await page.goto(`${base}#/q/${q}/job/${encodeURIComponent(`x0${payloads[0]}`)}`);
    await page.getByTestId('failed-reason').waitFor();
    expect(await page.getByTestId('job-name').textContent()).toBe(payloads[0]);
    expect(await page.getByTestId('failed-reason').textContent()).toBe(payloads.join('\n'));
    await shot(page, 'xss-job');
    const state = await page.evaluate(() => ({
      xss: (window as { __xss?: number }).__xss,
      csp: (window as { __csp: string[] }).__csp,
      elements: document.querySelectorAll('img, iframe, svg:not(.u-wrap svg), main script').length,
      jsLinks: [...document.querySelectorAll('a')].filter((a) => a.getAttribute('href')?.toLowerCase().startsWith('javascript')).length,
    }));
    expect(state).toEqual({ xss: undefined, csp: [], elements: 0, jsLinks: 0 });
    expect(traps).toEqual({ dialogs: [], errors: [] });
  });
});
