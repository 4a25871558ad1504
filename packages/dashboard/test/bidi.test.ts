/**
 * Bidirectional-text spoofing in the web UI, driven in Debian's Chromium (playwright-core, never a
 * downloaded browser): queue names, job ids and names, failed reasons, logs, groups, schedulers and
 * audit entries holding right-to-left overrides (U+202E) and other bidi controls are each shown in
 * an isolate, in every view, the confirmation dialog and the toasts, so they cannot reorder the
 * text around them (the page's own labels, the state badge). Writes no screenshot.
 */
import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { useHopper } from '../../hopper/test/helpers/hopper.js';
import { collect } from '../../hopper/test/helpers/wait.js';
import { createDashboard, toNodeListener } from '../src/index.js';

// The page's globals as the callbacks run in the browser use them (this file compiles without the DOM lib).
interface PageNode {
  nodeValue: string | null;
  parentElement: PageNode | null;
  tagName: string;
}
declare const document: {
  body: PageNode;
  createTreeWalker(root: PageNode, what: number): { nextNode(): PageNode | null };
  querySelector(selector: string): { getBoundingClientRect(): { left: number; right: number } } | null;
};
declare function getComputedStyle(el: PageNode): { unicodeBidi: string };
declare const window: { location: { hash: string } };
declare const sessionStorage: { setItem(key: string, value: string): void };

const CHROMIUM = process.env.HOPPER_CHROMIUM ?? '/usr/bin/chromium';
const TOKEN = 'bidi-browser-token-0123456789';
const RLO = '\u202E';
const env = useHopper();
let browser: Browser | undefined;
const closers: (() => Promise<void>)[] = [];
afterAll(async () => {
  await browser?.close();
});
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

async function launch(): Promise<Browser> {
  if (!existsSync(CHROMIUM))
    throw new Error(
      `The browser tests need Chromium at ${CHROMIUM}: \`apt-get update && apt-get install -y chromium\` (or set HOPPER_CHROMIUM). They never download a browser.`,
    );
  browser ??= await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-gpu'] });
  return browser;
}

async function serve(): Promise<string> {
  const dashboard = createDashboard({ connection: env.url, prefix: env.prefix, basePath: '/', auth: { tokens: [{ token: TOKEN }] } });
  const server: Server = createServer(toNodeListener(dashboard));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await dashboard.close();
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
}

/** Text nodes holding a bidi control whose parent is not an isolate: [text, parent tag, its unicode-bidi]. */
async function unisolated(page: Page): Promise<[string, string, string][]> {
  return page.evaluate(() => {
    const out: [string, string, string][] = [];
    const walker = document.createTreeWalker(document.body, 4 /* NodeFilter.SHOW_TEXT */);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      if (!/[\u202A-\u202E\u2066-\u2069\u200E\u200F\u061C]/.test(node.nodeValue ?? '')) continue;
      const parent = node.parentElement!;
      const bidi = getComputedStyle(parent).unicodeBidi;
      if (bidi !== 'isolate' && bidi !== 'isolate-override' && bidi !== 'plaintext') out.push([node.nodeValue!, parent.tagName, bidi]);
    }
    return out;
  });
}

async function view(page: Page, base: string, hash: string): Promise<void> {
  await page.goto(`${base}${hash}`);
  await page.waitForFunction(() => document.querySelector(`main[data-ready="${window.location.hash}"]`) !== null);
}

describe('bidirectional text in the browser', () => {
  it('isolates every piece of user text in every view, dialog and toast', async () => {
    const queueName = `${env.queueName('bidi')}${RLO}gnp`;
    const jobId = `inv${RLO}fdp.exe`;
    const queue = env.queue(queueName);
    await queue.add(`invoice${RLO}exe.pdf`, { note: `a${RLO}b` }, { jobId, group: { id: `tenant${RLO}1` } });
    await queue.upsertJobScheduler(`nightly${RLO}x`, { every: 3_600_000, startDate: Date.now() + 3_600_000 }, { name: `sched${RLO}y` });
    const worker = env.worker(queueName, async (job) => {
      await job.log(`log${RLO}line`);
      throw new Error(`declined${RLO}reason`);
    });
    await collect(worker, 'failed', 1);
    await worker.close();
    const base = await serve();
    const context = await (await launch()).newContext({ viewport: { width: 1280, height: 860 } });
    closers.push(() => context.close());
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.addInitScript((token) => sessionStorage.setItem('hopper.dashboard.auth', `Bearer ${token}`), TOKEN);
    const q = encodeURIComponent(queueName);
    const job = `#/q/${q}/job/${encodeURIComponent(jobId)}`;

    // The job's page: the state badge stays after the id (an unisolated override would pull it before).
    await view(page, base, job);
    const boxes = await page.evaluate(() => ({
      id: document.querySelector('[data-testid=job-id]')!.getBoundingClientRect(),
      state: document.querySelector('[data-testid=job-state]')!.getBoundingClientRect(),
    }));
    expect(boxes.state.left).toBeGreaterThanOrEqual(boxes.id.right - 1);
    expect(await unisolated(page)).toEqual([]);
    // A confirmation naming the job, then the toast naming it.
    await page.getByTestId('job-retry').click();
    await page.getByTestId('confirm').waitFor();
    expect(await unisolated(page)).toEqual([]);
    await page.getByTestId('confirm-ok').click();
    await page.getByTestId('toast').first().waitFor();
    expect(await unisolated(page)).toEqual([]);

    for (const hash of ['#/', `#/q/${q}?state=failed`, `#/q/${q}?state=waiting`, `#/q/${q}/schedulers`, `#/q/${q}/groups`, '#/audit']) {
      await view(page, base, hash);
      expect([hash, await unisolated(page)]).toEqual([hash, []]);
    }
    // Every view above showed the hostile text somewhere (the check had something to check).
    await view(page, base, '#/audit');
    expect(await page.locator('main').textContent()).toContain(jobId);
    expect(errors).toEqual([]);
  });
});
