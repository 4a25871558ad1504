// Summarises V8 CPU profiles (`.cpuprofile`, from `npm run bench -- --cpu-prof` or
// `bench/src/worker-ab.mjs --cpu-prof=<dir>`): self time by function and by file, as a share of
// the busy time (everything but `(idle)`), summed over every profile given.
//
//   node bench/src/profile-summary.mjs <file or directory>... [--top=40] [--match=<substring of the file name>]
//
// Self time is where the CPU was when sampled, not counting callees: what to cut. `(garbage
// collector)` is GC on the main thread; `(program)` is V8 and native work outside JavaScript.

import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';

const { values, positionals } = parseArgs({
  options: { top: { type: 'string' }, match: { type: 'string' } },
  allowPositionals: true,
});
const TOP = Number(values.top ?? 40);

function profilesUnder(entry) {
  if (statSync(entry).isDirectory()) return readdirSync(entry).flatMap((name) => profilesUnder(path.join(entry, name)));
  return entry.endsWith('.cpuprofile') && (!values.match || path.basename(entry).includes(values.match)) ? [entry] : [];
}

/** A short name for a script URL: the path from `hopper/`, `node_modules/` or `node:` on. */
function shortFile(url) {
  if (!url) return '(native)';
  const m = /(node_modules\/.*|packages\/hopper\/.*|node:.*|bench\/.*)$/.exec(url.replace(/^file:\/\//, ''));
  return m ? m[1] : url;
}

const byFunction = new Map();
const byFile = new Map();
let busy = 0;
let idle = 0;
const files = positionals.flatMap(profilesUnder);
if (files.length === 0) throw new Error('no .cpuprofile found in the arguments');
for (const file of files) {
  const profile = JSON.parse(readFileSync(file, 'utf8'));
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map();
  for (let i = 0; i < profile.samples.length; i++) {
    const id = profile.samples[i];
    self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  }
  for (const [id, us] of self) {
    const { callFrame } = nodes.get(id);
    if (callFrame.functionName === '(idle)') {
      idle += us;
      continue;
    }
    busy += us;
    const fileName = shortFile(callFrame.url);
    const fn = `${callFrame.functionName || '(anonymous)'} ${fileName}${callFrame.url ? `:${callFrame.lineNumber + 1}` : ''}`;
    byFunction.set(fn, (byFunction.get(fn) ?? 0) + us);
    byFile.set(fileName, (byFile.get(fileName) ?? 0) + us);
  }
}

const table = (title, map) => {
  console.log(`\n${title}`);
  const rows = [...map].sort((a, b) => b[1] - a[1]).slice(0, TOP);
  for (const [name, us] of rows)
    console.log(`${((us / busy) * 100).toFixed(1).padStart(5)}%  ${(us / 1000).toFixed(0).padStart(7)} ms  ${name}`);
};
console.log(
  `${files.length} profile(s); busy ${(busy / 1000).toFixed(0)} ms, idle ${(idle / 1000).toFixed(0)} ms (${((idle / (busy + idle)) * 100).toFixed(0)}% idle)`,
);
table('Self time by file', byFile);
table('Self time by function', byFunction);
