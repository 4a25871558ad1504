/**
 * The backend seam speaks in typed results (issue 15): no raw script result code (a number such
 * as -4) is compared in api/ or job/; each backend maps its own codes to the unions of
 * backend/records.ts and callers switch on `kind`. This guard reads the sources.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const src = fileURLToPath(new URL('../../src/', import.meta.url));

/** Files still being moved to typed results by other work: the scheduler seam (upsert, pause, advance). */
const PENDING = new Set(['api/job-schedulers.ts']);

/** A comparison with a negative literal, a `case -N:`, or a `code` compared with a literal. */
const RAW_CODE = /[=!]==?\s*-\d|\bcase\s+-\d|\bcode\s*[=!]==?\s*\d/;

function rawCodes(dir: string): string[] {
  const found: string[] = [];
  for (const name of readdirSync(`${src}${dir}`)) {
    const file = `${dir}/${name}`;
    if (!name.endsWith('.ts') || PENDING.has(file)) continue;
    readFileSync(`${src}${file}`, 'utf8')
      .split('\n')
      .forEach((line, i) => {
        if (RAW_CODE.test(line)) found.push(`${file}:${i + 1}: ${line.trim()}`);
      });
  }
  return found;
}

describe('typed backend seam', () => {
  it('finds the raw-code patterns it looks for', () => {
    expect(RAW_CODE.test('if (code === -4) throw x;')).toBe(true);
    expect(RAW_CODE.test('    case -7:')).toBe(true);
    expect(RAW_CODE.test("if (result.code === 1) this.emit('removed', id);")).toBe(true);
    expect(RAW_CODE.test("if (result.kind === 'removed') removed++;")).toBe(false);
  });

  it('compares no raw result code in api/ or job/', () => {
    expect([...rawCodes('api'), ...rawCodes('job')]).toEqual([]);
  });
});
