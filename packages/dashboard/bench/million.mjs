// The dashboard on a queue of 1,000,000 jobs: fills one (addBulk in chunks) on its own
// redis-server, then times the API calls the UI makes (overview, job pages near the head, the
// middle and the tail, a job, an exact-id search, one search slice, a whole-queue search, the
// series). Not part of `npm test`: `npm run scale -w hopper-queue-dashboard` (after `npm run build`).
//
// Options: --jobs 1000000 --port 6510 --runs 20
/* global performance */
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import { connect } from 'node:net';
import { parseArgs } from 'node:util';
import { Queue, Worker } from 'hopper-queue';
import { createDashboard, toNodeListener } from '../dist/index.js';

const { values } = parseArgs({ options: { jobs: { type: 'string' }, port: { type: 'string' }, runs: { type: 'string' } } });
const JOBS = Number(values.jobs ?? 1_000_000);
const PORT = Number(values.port ?? 6510);
const RUNS = Number(values.runs ?? 20);
const TOKEN = 'million-token-0123456789';

const redis = spawn('redis-server', ['--port', String(PORT), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
  stdio: 'ignore',
});
const stopRedis = () => redis.kill('SIGTERM');
process.on('exit', stopRedis);
const connection = { host: '127.0.0.1', port: PORT };
// Wait until the server accepts connections.
for (let i = 0; ; i++) {
  const up = await new Promise((resolve) => {
    const socket = connect(PORT, '127.0.0.1', () => (socket.end(), resolve(true)));
    socket.on('error', () => resolve(false));
  });
  if (up) break;
  if (i > 100) throw new Error(`redis-server did not start on port ${PORT}`);
  await new Promise((r) => setTimeout(r, 50));
}

const queue = new Queue('big', { connection });
const t0 = performance.now();
const CHUNK = 5_000;
for (let i = 0; i < JOBS; i += CHUNK) {
  const n = Math.min(CHUNK, JOBS - i);
  await queue.addBulk(
    Array.from({ length: n }, (_, k) => ({
      name: (i + k) % 1000 === 0 ? 'invoice' : 'email',
      data: { i: i + k, customer: `customer-${i + k}` },
    })),
  );
  if ((i / CHUNK) % 40 === 0) process.stdout.write(`\rfilled ${i + n}`);
}
const fillS = (performance.now() - t0) / 1000;
console.log(`\rfilled ${JOBS} waiting jobs in ${fillS.toFixed(1)} s`);

// 2,000 finished jobs (1 in 4 failed) in a second queue, for the series and latency figures.
const side = new Queue('side', { connection });
await side.addBulk(Array.from({ length: 2000 }, (_, i) => ({ name: 'x', data: { i } })));
let finished = 0;
await new Promise((resolve) => {
  const worker = new Worker(
    'side',
    async (job) => {
      if (job.data.i % 4 === 0) throw new Error(`declined ${job.data.i}`);
    },
    { connection, concurrency: 50 },
  );
  const done = () => ++finished === 2000 && worker.close().then(resolve);
  worker.on('completed', done);
  worker.on('failed', done);
});

const dashboard = createDashboard({ connection, auth: { tokens: [{ token: TOKEN }] } });
const server = createServer(toNodeListener(dashboard));
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const base = `http://127.0.0.1:${server.address().port}/api/`;
const get = async (path) => {
  const res = await fetch(base + path, { headers: { authorization: `Bearer ${TOKEN}` } });
  if (!res.ok) throw new Error(`${path}: HTTP ${res.status} ${await res.text()}`);
  return res.json();
};

const middleId = String(Math.floor(JOBS / 2) + 1); // ids are 1..JOBS
const rows = [];
async function time(label, path, check) {
  const ms = [];
  let body;
  for (let r = 0; r < RUNS; r++) {
    const t = performance.now();
    body = await get(path);
    ms.push(performance.now() - t);
  }
  if (check) check(body);
  ms.sort((a, b) => a - b);
  const p = (q) => ms[Math.min(ms.length - 1, Math.ceil(q * ms.length) - 1)];
  rows.push({ label, p50: p(0.5), p95: p(0.95), max: ms[ms.length - 1] });
  console.log(`${label.padEnd(58)} p50 ${p(0.5).toFixed(1).padStart(7)} ms  p95 ${p(0.95).toFixed(1).padStart(7)} ms`);
}
const assert = (ok, message) => {
  if (!ok) throw new Error(message);
};

await time('overview (every queue, counts per state)', 'queues', (b) =>
  assert(b.find((q) => q.name === 'big').counts.waiting === JOBS, 'count'),
);
await time('queue page: newest 50 waiting', 'queues/big/jobs?state=waiting&limit=50', (b) =>
  assert(b.jobs.length === 50 && b.total === JOBS, 'page'),
);
await time('queue page: 50 at offset 500,000', `queues/big/jobs?state=waiting&limit=50&offset=${JOBS / 2}`, (b) =>
  assert(b.jobs.length === 50, 'mid'),
);
await time('queue page: oldest 50 (order=asc)', 'queues/big/jobs?state=waiting&limit=50&order=asc', (b) =>
  assert(b.jobs[0].id === '1', 'asc'),
);
await time('job page (data, options, logs, steps, children)', `queues/big/jobs/${middleId}`, (b) => assert(b.id === middleId, 'job'));
await time('search: exact id', `queues/big/search?q=${middleId}&field=id&scan=1`, (b) => assert(b.jobs[0].id === middleId, 'id'));
await time('search: one slice of 2,000 jobs by data substring', 'queues/big/search?q=customer-99999x&field=data&scan=2000', (b) =>
  assert(b.cursor === 2000, 'slice'),
);
await time('series + wait/run p50/p95 (side queue, 2,000 finished)', 'queues/side/series?minutes=60', (b) =>
  assert(b.latency.sample > 0, 'series'),
);

// A whole-queue search as the UI runs it: slice after slice of 2,000 until the end.
const ts = performance.now();
let cursor = 0;
let found = 0;
let calls = 0;
while (cursor !== null) {
  const page = await get(`queues/big/search?q=invoice&field=name&scan=2000&cursor=${cursor}`);
  found += page.jobs.length;
  cursor = page.cursor;
  calls++;
}
const fullS = (performance.now() - ts) / 1000;
assert(found === JOBS / 1000, `found ${found}`);
console.log(`whole-queue search by name: ${found} found in ${JOBS} jobs, ${calls} calls, ${fullS.toFixed(1)} s`);
console.log(
  JSON.stringify(
    { jobs: JOBS, fillSeconds: Number(fillS.toFixed(1)), rows, fullSearch: { calls, seconds: Number(fullS.toFixed(1)), found } },
    null,
    1,
  ),
);

await dashboard.close();
server.close();
await queue.close();
await side.close();
stopRedis();
process.exit(0);
