// Measures the SQLite backend's wake-up latency: from the moment a job is added to the moment an
// idle worker's processor starts it, (a) with the worker in the adding process (in-process
// wake-up) and (b) in another process on the same file database (adaptive poll). The worker is
// left idle between jobs (IDLE_MS) so that each add finds it waiting. Run after `npm run build`:
//   node bench/src/sqlite-wakeup.mjs [samples]
import { fork } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { Queue, Worker } from 'hopper-queue';

const SAMPLES = Number(process.argv[2] ?? 40);
const IDLE_MS = 300;
const wallNow = () => performance.timeOrigin + performance.now();
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

if (process.argv[2] === '--child') {
  const [, , , url, name] = process.argv;
  const worker = new Worker(name, async () => process.send({ started: wallNow() }), { connection: url });
  await worker.waitUntilReady();
  process.send({ ready: true });
  process.on('message', () => void worker.close().then(() => process.exit(0)));
} else {
  const dir = mkdtempSync(path.join(tmpdir(), 'hopper-wakeup-'));
  const url = `sqlite:${path.join(dir, 'wakeup.db')}`;
  const stats = (list) => {
    const s = [...list].sort((a, b) => a - b);
    const at = (p) => s[Math.min(s.length - 1, Math.floor(p * s.length))].toFixed(2);
    return `p50 ${at(0.5)} ms, p90 ${at(0.9)} ms, max ${s[s.length - 1].toFixed(2)} ms (${s.length} samples)`;
  };

  // (a) same process.
  const queue = new Queue('same', { connection: url });
  let started;
  const worker = new Worker('same', async () => started?.(wallNow()), { connection: url });
  await worker.waitUntilReady();
  const same = [];
  for (let i = 0; i < SAMPLES; i++) {
    await sleep(IDLE_MS);
    const begun = new Promise((resolve) => (started = resolve));
    const t0 = wallNow();
    await queue.add('x', {});
    same.push((await begun) - t0);
  }
  await worker.close();
  await queue.close();
  console.log(`same process:    ${stats(same)}`);

  // (b) another process on the same file.
  const other = new Queue('other', { connection: url });
  await other.waitUntilReady();
  const child = fork(fileURLToPath(import.meta.url), ['--child', url, 'other']);
  let onMessage;
  child.on('message', (m) => onMessage?.(m));
  await new Promise((resolve) => (onMessage = (m) => m.ready && resolve()));
  const cross = [];
  for (let i = 0; i < SAMPLES; i++) {
    await sleep(IDLE_MS);
    const begun = new Promise((resolve) => (onMessage = (m) => m.started && resolve(m.started)));
    const t0 = wallNow();
    await other.add('x', {});
    cross.push((await begun) - t0);
  }
  child.send('close');
  await new Promise((resolve) => child.once('exit', resolve));
  await other.close();
  console.log(`another process: ${stats(cross)}`);
  rmSync(dir, { recursive: true, force: true });
}
