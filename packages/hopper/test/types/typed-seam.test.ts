/**
 * The backend seam speaks in typed results (issue 15): no raw script result code (a number such
 * as -4) is compared by the seam's callers (api/, job/, runtime/, maintenance/); each backend
 * maps its own codes to the unions of backend/records.ts and requests.ts, and callers switch on
 * them. This guard reads the sources: the callers, and the seam's own declarations (a method
 * that returns a bare number must be a count, a duration or a time, listed below with what its
 * number is).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { WriteCode, writeApplied } from '../../src/backend/backend.js';

const src = fileURLToPath(new URL('../../src/', import.meta.url));

/** The seam's callers, scanned for raw codes. */
const CALLERS = ['api', 'job', 'runtime', 'maintenance'];

/**
 * A comparison with a negative literal, a `case -N:`, or a `code` compared with a literal (`code
 * === 1`, `code > 0`, `code <= 0`: the script codes' "applied" test).
 */
const RAW_CODE = /[=!]==?\s*-\d|\bcase\s+-\d|\bcode\s*[=!]==?\s*\d|\bcode\s*[<>]=?\s*-?\d/;

function rawCodes(dir: string): string[] {
  const found: string[] = [];
  for (const name of readdirSync(`${src}${dir}`)) {
    const file = `${dir}/${name}`;
    if (!name.endsWith('.ts')) continue;
    readFileSync(`${src}${file}`, 'utf8')
      .split('\n')
      .forEach((line, i) => {
        if (RAW_CODE.test(line)) found.push(`${file}:${i + 1}: ${line.trim()}`);
      });
  }
  return found;
}

/**
 * The seam's methods whose result is a bare number (or numbers), and what that number is. Each
 * is a count, a duration or a time: a code (what the write did) is a typed result instead.
 */
const NUMBER_RESULTS: Record<string, string> = {
  releaseOrphans: 'count of jobs put back',
  rateLimit: 'count of limit keys removed',
  getRateLimitTtl: "ms until claims may resume (BullMQ's reading, passed through as is: -2 none)",
  trimEvents: 'count of events removed',
  clearLogs: 'count of log lines left',
  removeOrphanedJobs: 'count of jobs removed',
  getBudgetUse: "sum of a tenant's costs",
  getCountsPerPriority: 'counts of ready jobs',
  getGroupsCount: 'count of groups',
  getSchedulersCount: 'count of schedulers',
  nextSchedulerDue: 'a due time (ms), or null',
  time: "the backend's clock (ms)",
  deleteAll: 'count of keys deleted',
};

/** Drops comments, so that doc comments naming old codes do not count. */
function stripComments(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/\/\/[^\n]*/g, '');
}

/**
 * Each method signature of the interfaces in `text` (`name(args): Result;`, over several lines
 * too) as [name, result type]. Parentheses in the arguments (callbacks) are matched.
 */
function methodResults(text: string): [string, string][] {
  const code = stripComments(text);
  const out: [string, string][] = [];
  const start = /^\s+(?:readonly\s+)?(\w+)\s*\(/gm;
  for (let m = start.exec(code); m; m = start.exec(code)) {
    let depth = 1;
    let i = m.index + m[0].length;
    for (; i < code.length && depth > 0; i++) {
      if (code[i] === '(') depth++;
      else if (code[i] === ')') depth--;
    }
    const rest = /^\s*:\s*([^;{]*(?:\{[^}]*\}[^;{]*)*);/.exec(code.slice(i));
    if (rest) out.push([m[1], rest[1].replace(/\s+/g, ' ').trim()]);
  }
  return out;
}

/** Whether a result type is a bare number, numbers, or a number beside other kinds (`number | 'x'`). */
function isNumberResult(type: string): boolean {
  const inner = /^Promise<(.*)>$/.exec(type)?.[1] ?? type;
  return inner.split('|').some((part) => /^(number|number\[\]|-?\d+)$/.test(part.trim()));
}

/** Fields that name what a write did (`code`, `kind`, `status`, `outcome`, `result`) typed as numbers. */
const NUMERIC_CODE_FIELD = /\b(code|kind|status|outcome|result)\??\s*:\s*(number\b|-?\d+\s*[|;}])/;

function seamFiles(): Record<string, string> {
  const files: Record<string, string> = {};
  for (const name of ['backend.ts', 'records.ts', 'requests.ts', 'metrics-records.ts']) {
    files[name] = readFileSync(`${src}backend/${name}`, 'utf8');
  }
  return files;
}

describe('typed backend seam', () => {
  it('finds the raw-code patterns it looks for', () => {
    expect(RAW_CODE.test('if (code === -4) throw x;')).toBe(true);
    expect(RAW_CODE.test('    case -7:')).toBe(true);
    expect(RAW_CODE.test("if (result.code === 1) this.emit('removed', id);")).toBe(true);
    expect(RAW_CODE.test('const done = code > 0 || resent;')).toBe(true);
    expect(RAW_CODE.test('if (code <= 0) this.o.onError(err);')).toBe(true);
    expect(RAW_CODE.test("if (result.kind === 'removed') removed++;")).toBe(false);
    expect(RAW_CODE.test('if (writeApplied(code)) return;')).toBe(false);
  });

  it("compares no raw result code in the seam's callers (api/, job/, runtime/, maintenance/)", () => {
    expect(CALLERS.flatMap(rawCodes)).toEqual([]);
  });

  it('reads method results as declared, over several lines and around callbacks', () => {
    const sample = `interface X {
  /** 1 changed, 0 not. */
  pauseThing(id: string, paused: boolean): Promise<number>;
  onCancel(listener: (jobId: string) => void): Promise<void>;
  advance(
    id: string,
    plan: { at: number }[],
  ): Promise<{ created: number; again: boolean }>;
  ids(): Promise<number[] | undefined>;
  readonly isCluster: boolean;
}`;
    const results = methodResults(sample);
    expect(results).toEqual([
      ['pauseThing', 'Promise<number>'],
      ['onCancel', 'Promise<void>'],
      ['advance', 'Promise<{ created: number; again: boolean }>'],
      ['ids', 'Promise<number[] | undefined>'],
    ]);
    expect(results.filter(([, type]) => isNumberResult(type)).map(([name]) => name)).toEqual(['pauseThing', 'ids']);
    expect(NUMERIC_CODE_FIELD.test('Promise<{ code: number; record: string }>')).toBe(true);
    expect(NUMERIC_CODE_FIELD.test("export type X = { kind: 1 | 'x' };")).toBe(true);
    expect(NUMERIC_CODE_FIELD.test('Promise<{ code: WriteCode; count: number }>')).toBe(false);
  });

  it('returns a bare number only for counts, durations and times (a code is a typed result)', () => {
    const text = readFileSync(`${src}backend/backend.ts`, 'utf8');
    const results = methodResults(text);
    // The parser saw the seam (a broken parse would find nothing and prove nothing).
    expect(results.length).toBeGreaterThan(100);
    expect(results.map(([name]) => name)).toEqual(expect.arrayContaining(['complete', 'configureGroup', 'upsertScheduler', 'addLog']));
    const numeric = results.filter(([, type]) => isNumberResult(type)).map(([name]) => name);
    expect(numeric.sort()).toEqual(Object.keys(NUMBER_RESULTS).sort());
  });

  it('types no result field that names what a write did (code, kind, status) as a number', () => {
    const found: string[] = [];
    for (const [name, text] of Object.entries(seamFiles())) {
      stripComments(text)
        .split('\n')
        .forEach((line, i) => {
          if (NUMERIC_CODE_FIELD.test(line)) found.push(`${name}:${i + 1}: ${line.trim()}`);
        });
    }
    expect(found).toEqual([]);
  });

  it('names every write code with a string (no script number reaches a caller)', () => {
    expectTypeOf<WriteCode>().toEqualTypeOf<
      'done' | 'failed-for-good' | 'cancelled' | 'missing' | 'stale-attempt' | 'not-active' | 'refused-cancelled' | 'over-budget'
    >();
    for (const code of Object.values(WriteCode)) expect(typeof code).toBe('string');
    expect(Object.values(WriteCode).filter(writeApplied)).toEqual(['done', 'failed-for-good', 'cancelled']);
  });
});
