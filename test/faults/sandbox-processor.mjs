// The sandboxed processor of the fault suite's blocking row: blocks its own event loop (a child
// process), which must not cost the worker its lock. Records like worker.mjs does.
import { appendFileSync } from 'node:fs';

function record(entry) {
  appendFileSync(process.env.HOPPER_FAULTS_EFFECTS, JSON.stringify({ ...entry, pid: process.pid, at: Date.now() }) + '\n');
}

export default async function (job, token) {
  const d = job.data ?? {};
  record({ t: 'start', id: job.id, attempt: job.attemptsStarted, token });
  if (d.blockMs) {
    const until = Date.now() + d.blockMs;
    while (Date.now() < until) {
      /* blocks this child's event loop on purpose */
    }
  }
  if (d.ms) await new Promise((resolve) => setTimeout(resolve, d.ms));
  record({ t: 'effect', id: job.id, attempt: job.attemptsStarted, token });
  return { pid: process.pid };
}
