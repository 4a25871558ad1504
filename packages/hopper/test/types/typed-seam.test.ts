/**
 * The backend seam speaks in typed results (issue 15): no raw script result code (a number such
 * as -4) is compared by the seam's callers (api/, job/, runtime/, maintenance/); each backend
 * maps its own codes to the unions of backend/records.ts and requests.ts, and callers switch on
 * them. This guard reads the sources: the callers, and the seam's own declarations (a method
 * that returns a bare number must be a count, a duration or a time, listed below with what its
 * number is). Nor does a storage field name (a Redis hash field such as `gcc`, `lm`, a SQLite
 * column): settings and records cross the seam typed, and each backend maps them to its own
 * storage.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
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
  for (const name of ['backend.ts', 'backend-reads.ts', 'backend-admin.ts', 'records.ts', 'requests.ts', 'metrics-records.ts']) {
    files[name] = readFileSync(`${src}backend/${name}`, 'utf8');
  }
  return files;
}

/** The folders that must not know a storage field name (recursively). */
const STORAGE_FREE = ['api', 'job', 'runtime', 'maintenance', 'admin'];

/** Hash commands in the Lua scripts: the literals after the key are field names (and values). */
const HASH_COMMAND = /'(?:HGET|HSET|HSETNX|HDEL|HMGET|HEXISTS|HINCRBY|HINCRBYFLOAT)'\s*,\s*[^,]+,(.*)$/;

/**
 * The storage's own names: every field a Lua script reads or writes by name in a hash (with the
 * few letter values beside them, such as a group's status letters), and the SQLite schema's
 * columns.
 */
function storageNames(): Set<string> {
  const names = new Set<string>();
  for (const dir of ['backend/redis/scripts/', 'backend/redis/scripts/includes/']) {
    for (const file of readdirSync(`${src}${dir}`).filter((name) => name.endsWith('.lua'))) {
      for (const line of readFileSync(`${src}${dir}${file}`, 'utf8').split('\n')) {
        const rest = HASH_COMMAND.exec(line)?.[1];
        if (rest !== undefined) for (const literal of rest.matchAll(/'([a-z][A-Za-z0-9]*)'/g)) names.add(literal[1]);
      }
    }
  }
  const schema = readFileSync(`${src}backend/sqlite/database.ts`, 'utf8');
  for (const column of schema.matchAll(/^\s+([a-z][a-z_]*)\s+(?:TEXT|INTEGER|REAL|BLOB)\b/gm)) names.add(column[1]);
  return names;
}

/** The seam's own words: the field and parameter names and the string literals of its declarations. */
function seamWords(): Set<string> {
  const words = new Set<string>();
  for (const text of Object.values(seamFiles()).map(stripComments)) {
    for (const m of text.matchAll(/\b(\w+)\??\s*:/g)) words.add(m[1]);
    for (const m of text.matchAll(/'(\w+)'/g)) words.add(m[1]);
  }
  return words;
}

/**
 * Storage names that are also ordinary words (or BullMQ's public names), which the callers use
 * for their own things: a queue's `prefix`, an AbortSignal's `signal`, an event's `prev` state, a
 * cancel's `result` and `turn`, a process's `pid`, a job's `record` (JobRecord).
 */
const WORDS = new Set(['prefix', 'signal', 'prev', 'result', 'turn', 'pid', 'record']);

/** The storage letters: storage names that are neither a seam word nor an ordinary word. */
function storageLetters(): Set<string> {
  const seam = seamWords();
  return new Set([...storageNames()].filter((name) => !seam.has(name) && !WORDS.has(name)));
}

/**
 * Where a line uses one of `letters` as a field name: a whole string literal (`'gcc'`, any
 * length), or, for names of two characters or more, a property (`meta.lmax`) or an object key
 * (`{ lm: ... }`). A one-letter property or key is left out: `this.o`, `(a, b)` are not fields.
 */
function letterUses(line: string, letters: Set<string>): string[] {
  const found: string[] = [];
  for (const m of line.matchAll(/(['"`])([A-Za-z_]\w*)\1|\.([A-Za-z_]\w+)\b|(?:^|[{,])\s*([A-Za-z_]\w+)\??\s*:/g)) {
    const name = m[2] ?? m[3] ?? m[4];
    if (letters.has(name)) found.push(name);
  }
  return found;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(`${src}${dir}`).flatMap((name) => {
    const path = `${dir}/${name}`;
    if (statSync(`${src}${path}`).isDirectory()) return sourceFiles(path);
    return name.endsWith('.ts') ? [path] : [];
  });
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
    // The seam's interfaces: QueueBackend (backend.ts, with its reads in backend-reads.ts) and BackendAdmin (backend-admin.ts).
    const text = ['backend.ts', 'backend-reads.ts', 'backend-admin.ts']
      .map((name) => readFileSync(`${src}backend/${name}`, 'utf8'))
      .join('\n');
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

  it('reads the storage names from the Lua scripts and the SQLite schema, and finds their uses as field names', () => {
    const letters = storageLetters();
    // The settings fields (meta, group hash, SQLite group columns) and job hash fields are among them.
    for (const name of ['gcc', 'lmax', 'ldur', 'lwt', 'gcon', 'glm', 'gld', 'glw', 'gms', 'gwt', 'c', 'lm', 'ld', 'w', 'am', 'tk']) {
      expect(letters.has(name), name).toBe(true);
    }
    for (const word of ['paused', 'epoch', 'name', 'data', 'state', 'prefix']) expect(letters.has(word), word).toBe(false);
    const sample = new Set(['gcc', 'lmax', 'lm', 'c', 'o']);
    expect(letterUses("return numberField(meta, 'gcc');", sample)).toEqual(['gcc']);
    expect(letterUses('if (meta.lmax !== undefined) max = Number(meta.lmax);', sample)).toEqual(['lmax', 'lmax']);
    expect(letterUses("await backend.configureGroup(g, 'set', { lm: String(max) });", sample)).toEqual(['lm']);
    expect(letterUses("const GROUP = { concurrency: 'c' };", sample)).toEqual(['c']);
    expect(letterUses('this.o.backend.claim(request, lmaxed);', sample)).toEqual([]);
    expect(letterUses('await backend.configureQueue({ globalConcurrency: 3 });', sample)).toEqual([]);
  });

  it(`uses no storage field name in the seam's callers (${STORAGE_FREE.join('/, ')}/)`, () => {
    const letters = storageLetters();
    const found: string[] = [];
    for (const file of STORAGE_FREE.flatMap(sourceFiles)) {
      stripComments(readFileSync(`${src}${file}`, 'utf8'))
        .split('\n')
        .forEach((line, i) => {
          const uses = letterUses(line, letters);
          if (uses.length > 0) found.push(`${file}:${i + 1}: ${uses.join(', ')}: ${line.trim()}`);
        });
    }
    expect(found).toEqual([]);
  });

  it('names every write code with a string (no script number reaches a caller)', () => {
    expectTypeOf<WriteCode>().toEqualTypeOf<
      | 'done'
      | 'failed-for-good'
      | 'cancelled'
      | 'missing'
      | 'stale-attempt'
      | 'not-active'
      | 'refused-cancelled'
      | 'over-budget'
      | 'id-taken'
    >();
    for (const code of Object.values(WriteCode)) expect(typeof code).toBe('string');
    expect(Object.values(WriteCode).filter(writeApplied)).toEqual(['done', 'failed-for-good', 'cancelled']);
  });
});
