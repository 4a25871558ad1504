/**
 * Bull Board's own UI behind bullBoardGuard(), in Debian's Chromium (playwright-core, never a
 * downloaded browser): the page loads and lists the Hopper queue under the guard's
 * Content-Security-Policy with no violation reported, and refuses to be framed. Writes no screenshot.
 */
import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createBullBoard } from '@bull-board/api';
import { ExpressAdapter } from '@bull-board/express';
import express from 'express';
import { Queue } from 'hopper-queue';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { useHopper } from '../../hopper/test/helpers/hopper.js';
import { HopperAdapter, bullBoardGuard } from '../src/index.js';

declare const document: {
  addEventListener(type: string, listener: (event: { violatedDirective: string; blockedURI: string }) => void): void;
};
declare const window: unknown;

const CHROMIUM = process.env.HOPPER_CHROMIUM ?? '/usr/bin/chromium';
const env = useHopper();
let browser: Browser | undefined;
const closers: (() => Promise<void>)[] = [];
afterAll(async () => {
  await browser?.close();
});
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

describe("Bull Board's UI under the guard", () => {
  it('loads and lists the queue with no CSP violation', async () => {
    if (!existsSync(CHROMIUM))
      throw new Error(
        `This test needs Chromium at ${CHROMIUM}: \`apt-get install -y chromium\` (or set HOPPER_CHROMIUM). It never downloads a browser.`,
      );
    const name = env.queueName('ui');
    const queue = env.track(new Queue(name, { connection: env.url, prefix: env.prefix }));
    await queue.add('x', { apiKey: 'k-1' });
    const adapter = new HopperAdapter(queue);
    closers.push(() => adapter.close());
    const serverAdapter = new ExpressAdapter();
    serverAdapter.setBasePath('/admin/queues');
    createBullBoard({ queues: [adapter], serverAdapter });
    const app = express();
    app.use('/admin/queues', bullBoardGuard(), serverAdapter.getRouter() as express.Router);
    const server: Server = createServer(app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    closers.push(async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    });
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/admin/queues`;

    browser ??= await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-gpu'] });
    const context = await browser.newContext();
    closers.push(() => context.close());
    const page = await context.newPage();
    // No network here: the fonts Bull Board asks Google for fail fast (a failed load is not a CSP violation).
    await page.route(/fonts\.(googleapis|gstatic)\.com/, (route) => route.abort());
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.addInitScript(() => {
      const w = window as { __csp: string[] };
      w.__csp = [];
      document.addEventListener('securitypolicyviolation', (e) => w.__csp.push(`${e.violatedDirective} ${e.blockedURI}`));
    });
    const res = await page.goto(`${base}/`);
    expect(res?.headers()['content-security-policy']).toContain("frame-ancestors 'none'");
    await page.getByText(name).first().waitFor({ timeout: 15_000 });
    expect(await page.evaluate(() => (window as { __csp: string[] }).__csp)).toEqual([]);
    expect(errors).toEqual([]);
  });
});
