/**
 * The demo end to end, as a new user runs it: `node examples/demo.mjs --duration <s>` against the
 * test Redis, its dashboard opened in Debian's Chromium (playwright-core, never a downloaded
 * browser) and signed in with the printed user and password; every scenario's queues must appear
 * with activity, the digest's scheduler with its preview; the screenshot is saved as
 * docs/screenshots/demo.png (the README's) when HOPPER_SCREENSHOTS=1 (`npm run screenshots`). Then the demo must end by itself with a summary line
 * per scenario and "no job lost". A second run on the SQLite backend says which scenarios it skips
 * and why, and runs the invoice pipeline.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { describe, inject, it } from 'vitest';

declare const document: {
  querySelectorAll(selector: string): ArrayLike<{ getAttribute(name: string): string | null; textContent: string | null }>;
};

const CHROMIUM = process.env.HOPPER_CHROMIUM ?? '/usr/bin/chromium';
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const SHOT = `${ROOT}docs/screenshots/demo.png`;
const SCENARIOS = ['invoices', 'stock', 'digest', 'newsletter', 'generation'];
const QUEUES = [
  'invoice-ocr',
  'invoice-nlp',
  'invoice-validate',
  'invoice-index',
  'invoice-dead',
  'stock-amazon',
  'stock-ebay',
  'stock-zalando',
  'digest',
  'newsletter',
  'llm',
];

/** Starts the demo; `output()` is what it printed so far, `line(re)` waits for a line, `exit` its exit code. */
function startDemo(args: string[]) {
  const child = spawn(process.execPath, [`${ROOT}examples/demo.mjs`, ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  const waiters: { re: RegExp; resolve: (m: RegExpMatchArray) => void }[] = [];
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    out += chunk;
    for (const w of [...waiters]) {
      const m = w.re.exec(out);
      if (m) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(m);
      }
    }
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
  const exit = new Promise<number | null>((resolve) => child.on('exit', resolve));
  return {
    child,
    exit,
    output: () => `${out}${err ? `\n--- stderr\n${err}` : ''}`,
    line(re: RegExp): Promise<RegExpMatchArray> {
      const m = re.exec(out);
      if (m) return Promise.resolve(m);
      return Promise.race([
        new Promise<RegExpMatchArray>((resolve) => waiters.push({ re, resolve })),
        exit.then(() => {
          throw new Error(`the demo exited before printing ${re}:\n${out}\n${err}`);
        }),
      ]);
    },
  };
}

describe('npm run demo', () => {
  it.concurrent(
    'runs every scenario, shows them in the dashboard, and ends by itself with nothing lost',
    { timeout: 60_000 },
    async ({ expect }) => {
      if (!existsSync(CHROMIUM)) {
        throw new Error(
          `This test needs Chromium at ${CHROMIUM}: \`apt-get update && apt-get install -y chromium\` (it never downloads a browser).`,
        );
      }
      const demo = startDemo(['--duration', '12', '--port', '0', '--redis', inject('redisUrl'), '--prefix', `demo-test-${process.pid}`]);
      try {
        const [, url, password] = await demo.line(
          /dashboard: (http:\/\/127\.0\.0\.1:\d+\/) {2}\(sign in with user "demo", password "([^"]+)"\)/,
        );
        for (const name of SCENARIOS) await demo.line(new RegExp(`\\[${name}\\] started`));

        const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-gpu'] });
        try {
          const page = await browser.newPage({ viewport: { width: 1440, height: 1000 } });
          const errors: string[] = [];
          page.on('pageerror', (error) => errors.push(error.message));
          await page.goto(url);
          await page.getByLabel('user').fill('demo');
          await page.getByLabel('password', { exact: true }).fill(password);
          await page.getByRole('button', { name: 'Sign in' }).nth(1).click();
          // Every scenario's queue is listed, each with jobs in some state (activity), live.
          await page.waitForFunction(
            (queues: string[]) => {
              const cards = Array.from(document.querySelectorAll('[data-testid=queue-card]'));
              const busy = new Set(
                cards
                  .filter((card) => (card.textContent ?? '').match(/\d+/g)?.some((n) => Number(n) > 0))
                  .map((card) => card.getAttribute('data-queue')),
              );
              return queues.every((q) => busy.has(q));
            },
            QUEUES,
            { timeout: 15_000, polling: 250 },
          );
          const cards = await page.locator('[data-testid=queue-card]').all();
          const listed = await Promise.all(cards.map((card) => card.getAttribute('data-queue')));
          expect(listed).toEqual(expect.arrayContaining(QUEUES));
          if (process.env.HOPPER_SCREENSHOTS === '1') mkdirSync(`${ROOT}docs/screenshots`, { recursive: true });
          await page.screenshot({ path: process.env.HOPPER_SCREENSHOTS === '1' ? SHOT : undefined });

          // The daily digest's scheduler, previewed (07:00 Paris is 06:00 UTC in winter).
          await page.goto(`${url}#/q/digest/schedulers`);
          const row = page.locator('[data-testid=scheduler-row][data-id=daily-digest]');
          await row.locator('td', { hasText: 'Europe/Paris' }).waitFor({ timeout: 10_000 });
          await row.locator('.preview div').first().waitFor({ timeout: 10_000 });
          expect(errors).toEqual([]);
        } finally {
          await browser.close();
        }

        expect(await demo.exit, demo.output()).toBe(0);
        const out = demo.output();
        // The final summary: one line per scenario after the workers closed.
        const final = out.slice(out.indexOf('shutdown: every worker closed'));
        for (const name of SCENARIOS) expect(final, out).toContain(`[${name}] `);
        expect(out).toMatch(/\[invoices\] \d+ uploaded, [1-9]\d* indexed, [1-9]\d* dead-lettered/);
        expect(out).toMatch(/zalando \(5\/s\) \d+ syncs, 0 SKUs ok, [1-9]\d* failed \(HTTP 503/);
        expect(out).toMatch(/amazon \(20\/s\) [1-9]\d* syncs, [1-9]\d* SKUs ok, 0 failed/);
        expect(out).toMatch(/\[generation\] cancelRun\(run-2\)/);
        expect(out).toMatch(/shutdown: every worker closed/);
        expect(out).toMatch(/no job lost: all [1-9]\d* jobs the demo added are accounted for/);
        expect(out).toContain('demo stopped.');
      } finally {
        if (demo.child.exitCode === null) demo.child.kill('SIGKILL');
      }
    },
  );

  it.concurrent('on SQLite: runs every scenario (the SQLite backend has what each needs)', { timeout: 30_000 }, async ({ expect }) => {
    const demo = startDemo(['--duration', '3', '--port', '0', '--sqlite']);
    try {
      expect(await demo.exit, demo.output()).toBe(0);
      const out = demo.output();
      expect(out).toContain('backend: the embedded SQLite backend');
      // Rate limits and dead letters run on SQLite: the whole invoice pipeline runs.
      expect(out).not.toContain('[invoices] running without');
      expect(out).toMatch(/\[invoices\] \d+ uploaded, [1-9]\d* indexed/);
      // Schedulers, groups, streams and runs are on SQLite too: no scenario is skipped.
      expect(out).not.toContain('skipped on this backend');
      expect(out).toMatch(/\[stock\] amazon \(20\/s\) [1-9]\d* syncs/);
      expect(out).toMatch(/\[digest\] daily-digest: "0 7 \* \* \*" in Europe\/Paris, next runs/);
      expect(out).toMatch(/\[newsletter\] [1-9]\d* campaigns/);
      expect(out).toMatch(/\[generation\] started/);
      expect(out).toMatch(/no job lost: all [1-9]\d* jobs/);
    } finally {
      if (demo.child.exitCode === null) demo.child.kill('SIGKILL');
    }
  });
});
