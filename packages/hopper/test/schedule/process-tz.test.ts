/**
 * The process's own TZ must never change a schedule result. Node reads TZ once per process, so
 * the honest check runs the module in child processes started with different TZ values and
 * compares their answers with this process's. The module is transpiled with TypeScript (no
 * bundling, no rewriting) into a temporary directory whose node_modules links to the repo's.
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import ts from 'typescript';
import { afterAll, beforeAll, expect, test } from 'vitest';
import * as schedule from '../../src/schedule/index.js';

const run = promisify(execFile);
const SRC = fileURLToPath(new URL('../../src/', import.meta.url));
const ZONES = ['UTC', 'America/Los_Angeles', 'Asia/Tokyo', 'Pacific/Kiritimati', 'Europe/Paris', 'Australia/Lord_Howe'];

/** What both sides compute: previews, first occurrences, catch-up, jitter, date parsing. */
function compute(api: typeof schedule): unknown {
  const from = Date.parse('2026-03-27T12:00Z');
  const previews = [
    { pattern: '30 2 * * *', tz: 'Europe/Paris' },
    { pattern: '0,30 2 * * *', tz: 'America/New_York' },
    { pattern: '0 */2 * * *', tz: 'Australia/Lord_Howe' },
    { pattern: '0 0 * * *' }, // no tz: UTC, whatever the process says
    { pattern: '0 9 * * MON-FRI', startDate: '2026-04-01T09:00' }, // wall time in UTC
    { pattern: '0 9 * * *', tz: 'Asia/Tokyo', startDate: '2026-04-01', endDate: '2026-04-05T23:59' },
    { every: 3_600_000, startDate: '2026-03-29T02:30', tz: 'Europe/Paris' },
    { every: 86_400_000, offset: 3_600_000 },
  ].map((repeat) => api.nextFireTimes(repeat, { from, count: 6 }));
  const spec = api.validateRepeat({ pattern: '0 * * * *', tz: 'Europe/Paris', catchup: 'all', catchupWindow: 7_200_000 }, { now: from });
  return {
    previews,
    spec,
    first: api.firstOccurrence(api.validateRepeat({ every: 60_000 }, { now: from }), from + 12_345),
    catchup: api.planCatchup({ spec, lastInstant: Date.parse('2026-10-24T22:00Z'), now: Date.parse('2026-10-25T01:30Z') }),
    jitter: api.jitterFor('nightly', from, 60_000, from + 30_000),
  };
}

let dir = '';

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'hopper-schedule-tz-'));
  for (const folder of ['schedule', 'job']) {
    await mkdir(join(dir, folder));
    // From job/: the error classes the schedule module throws (errors.ts and the modules it re-exports).
    const files = (await readdir(join(SRC, folder))).filter((name) => (folder === 'job' ? /^errors(-[a-z]+)?\.ts$/ : /\.ts$/).test(name));
    for (const file of files) {
      const source = await readFile(join(SRC, folder, file), 'utf8');
      const { outputText } = ts.transpileModule(source, {
        compilerOptions: { module: ts.ModuleKind.ES2022, target: ts.ScriptTarget.ES2022 },
      });
      await writeFile(join(dir, folder, file.replace(/\.ts$/, '.js')), outputText);
    }
  }
  const cronerEntry = createRequire(import.meta.url).resolve('croner');
  const nodeModules = cronerEntry.slice(0, cronerEntry.lastIndexOf('/node_modules/') + '/node_modules'.length);
  await symlink(nodeModules, join(dir, 'node_modules'), 'dir');
  await writeFile(join(dir, 'package.json'), '{ "type": "module" }');
  await writeFile(
    join(dir, 'child.mjs'),
    [
      "import * as api from './schedule/index.js';",
      `const compute = ${compute.toString()};`,
      'const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;',
      'const offset = new Date(Date.UTC(2026, 0, 1)).getTimezoneOffset();',
      'process.stdout.write(JSON.stringify({ zone, offset, result: compute(api) }));',
    ].join('\n'),
  );
}, 60_000);

afterAll(async () => {
  if (dir !== '') await rm(dir, { recursive: true, force: true });
});

test('results are the same in processes whose TZ differs', async () => {
  const expected = JSON.parse(JSON.stringify(compute(schedule))) as unknown;
  const outputs = await Promise.all(
    ZONES.map(async (zone) => {
      const { stdout } = await run(process.execPath, [join(dir, 'child.mjs')], { env: { ...process.env, TZ: zone } });
      return JSON.parse(stdout) as { zone: string; offset: number; result: unknown };
    }),
  );
  // The children really ran in different zones (otherwise this test would prove nothing)...
  expect(outputs.map((output) => output.zone)).toEqual(ZONES);
  expect(new Set(outputs.map((output) => output.offset)).size).toBeGreaterThan(3);
  // ...and computed exactly what this process computes.
  for (const output of outputs) expect({ zone: output.zone, result: output.result }).toEqual({ zone: output.zone, result: expected });
}, 60_000);
