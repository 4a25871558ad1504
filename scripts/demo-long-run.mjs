// `npm run test:demo`: runs the demo for 3 minutes (`--duration`, default 180 s) and checks its final
// accounting: exit code 0 and "no job lost: all N jobs the demo added are accounted for". Past ~95 s
// the stock scheduler's retention (`removeOnComplete: { count: 200 }`) deletes completed jobs the
// check follows, so the run must also show jobs counted by their recorded outcome ("since deleted by
// retention"): the case the check once got wrong. Uses REDIS_URL, else the demo's own choice of
// backend. CI runs it beside the fault suite (it is mostly waiting); it is not part of `npm test`.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const { values } = parseArgs({ options: { duration: { type: 'string', default: '180' } } });
const duration = Number(values.duration);
if (!Number.isInteger(duration) || duration < 10) {
  console.error(`--duration must be an integer of at least 10 seconds, not "${values.duration}"`);
  process.exit(2);
}
const root = fileURLToPath(new URL('..', import.meta.url));
const args = ['examples/demo.mjs', '--duration', String(duration), '--port', '0', '--prefix', `demo-long-${process.pid}`];
if (process.env.REDIS_URL) args.push('--redis', process.env.REDIS_URL);
const child = spawn(process.execPath, args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
let out = '';
child.stdout.setEncoding('utf8').on('data', (chunk) => (out += chunk));
child.stderr.setEncoding('utf8').on('data', (chunk) => (out += chunk));
// Bound: the run, plus a minute for the graceful shutdown and the accounting.
const killer = setTimeout(() => child.kill('SIGKILL'), (duration + 60) * 1_000);
const code = await new Promise((resolve) => child.on('exit', (c, signal) => resolve(signal ?? c)));
clearTimeout(killer);

const problems = [];
if (code !== 0) problems.push(`the demo exited with ${code}`);
const final = /no job lost: all (\d+) jobs? the demo added are accounted for \(([^)]*(?:\([^)]*\)[^)]*)*)\)/.exec(out);
if (!final) problems.push('no "no job lost: all N jobs ... accounted for" line');
else if (duration >= 120 && !/since deleted by retention/.test(final[2]))
  problems.push('no job was counted by its recorded outcome after retention deleted it: the run did not cover the case it exists for');
if (/JOBS LOST/.test(out)) problems.push('the demo reported lost jobs');
const tail = out.trim().split('\n').slice(-4).join('\n');
if (problems.length > 0) {
  console.error(`demo long run (${duration} s) FAILED: ${problems.join('; ')}\n--- output\n${out}`);
  process.exit(1);
}
console.log(`demo long run (${duration} s) passed: ${final[1]} jobs accounted for\n${tail}`);
