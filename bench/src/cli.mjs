// Command-line options of `npm run bench -- [options]`.

import { parseArgs } from 'node:util';

export const LIBRARIES = ['hopper', 'bullmq', 'hopper-sqlite'];

/**
 * Libraries that run on a SQLite file database rather than on the run's Redis: each run gets a
 * fresh file, and the figures that measure Redis (its CPU, its memory) do not apply to them.
 */
export const SQLITE_LIBRARIES = new Set(['hopper-sqlite']);

const USAGE = `Usage: npm run bench -- [options]

  --quick              every scenario at a small size, 1 run each (CI smoke test; checks the
                       run completes, its figures are not comparable)
  --only=<a,b,...>     run only these scenarios (ids: %SCENARIOS%); a partial run writes
                       results/partial.* and leaves the baseline (latest.*) alone
  --lib=<a,b,...>      run only these libraries: hopper, bullmq (both on Redis, side by side),
                       hopper-sqlite (Hopper on a SQLite file database); default: all three
  --runs=N             runs per figure (default 3, or 1 with --quick)
  --cpu-prof           write a V8 CPU profile of every child process under bench/profiles/
  --help               show this`;

/**
 * Parses and validates the command line.
 * @param {string[]} argv
 * @param {string[]} scenarioIds valid --only values
 */
export function parseCli(argv, scenarioIds) {
  const usage = USAGE.replace('%SCENARIOS%', scenarioIds.join(', '));
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        quick: { type: 'boolean', default: false },
        only: { type: 'string' },
        lib: { type: 'string' },
        runs: { type: 'string' },
        'cpu-prof': { type: 'boolean', default: false },
        help: { type: 'boolean', default: false },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (error) {
    throw new Error(`${error.message}\n\n${usage}`);
  }
  if (values.help) return { help: usage };

  const only = values.only
    ?.split(',')
    .map((id) => id.trim())
    .filter(Boolean);
  const unknown = only?.filter((id) => !scenarioIds.includes(id)) ?? [];
  if (unknown.length > 0) {
    throw new Error(`unknown scenario(s) in --only: ${unknown.join(', ')} (known: ${scenarioIds.join(', ')})`);
  }
  const libs = values.lib === undefined ? LIBRARIES : values.lib.split(',').map((lib) => lib.trim());
  const unknownLibs = libs.filter((lib) => !LIBRARIES.includes(lib));
  if (unknownLibs.length > 0 || libs.length === 0) {
    throw new Error(`--lib takes one or more of ${LIBRARIES.join(', ')}, not "${values.lib}"`);
  }
  const runs = values.runs === undefined ? (values.quick ? 1 : 3) : Number(values.runs);
  if (!Number.isInteger(runs) || runs < 1) {
    throw new Error(`--runs must be a positive integer, not "${values.runs}"`);
  }
  return {
    quick: values.quick,
    only,
    libs: LIBRARIES.filter((lib) => libs.includes(lib)),
    runs,
    cpuProf: values['cpu-prof'],
  };
}
