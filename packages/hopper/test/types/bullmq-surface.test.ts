/**
 * BullMQ's public surface: every name BullMQ's index.d.ts exports (the version of the `bullmq`
 * devDependency) is exported by Hopper, or listed with its reason in docs/compatibility.md
 * ("BullMQ's exports"). The names Hopper exports are type-checked against BullMQ's where code
 * written for BullMQ uses them: test/types/bullmq-compat.ts, and the packaging check's fixtures.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const here = dirname(fileURLToPath(import.meta.url));

/** The names a module's entry (.ts or .d.ts) exports, as TypeScript resolves them. */
function exportedNames(entry: string): Set<string> {
  const program = ts.createProgram([entry], {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    skipLibCheck: true,
    noEmit: true,
  });
  const source = program.getSourceFile(entry);
  if (!source) throw new Error(`cannot read ${entry}`);
  const symbol = program.getTypeChecker().getSymbolAtLocation(source);
  if (!symbol) throw new Error(`${entry} is not a module`);
  return new Set(
    program
      .getTypeChecker()
      .getExportsOfModule(symbol)
      .map((s) => s.name),
  );
}

/** The names the first column of the table under "## BullMQ's exports" lists, in backticks. */
function listedExceptions(): Map<string, string> {
  const doc = readFileSync(join(here, '../../../../docs/compatibility.md'), 'utf8');
  const start = doc.indexOf("\n## BullMQ's exports");
  if (start < 0) throw new Error('docs/compatibility.md has no section "## BullMQ\'s exports"');
  const end = doc.indexOf('\n## ', start + 1);
  const listed = new Map<string, string>();
  for (const line of doc.slice(start, end < 0 ? undefined : end).split('\n')) {
    const cells = line.split('|');
    if (cells.length < 4 || !cells[1].includes('`')) continue;
    const reason = cells[2].trim();
    for (const [, name] of cells[1].matchAll(/`([A-Za-z_$][\w$]*)`/g)) listed.set(name, reason);
  }
  return listed;
}

describe("BullMQ's public surface", () => {
  const bullmqEntry = join(dirname(createRequire(import.meta.url).resolve('bullmq/package.json')), 'dist/esm/index.d.ts');
  const bullmq = exportedNames(bullmqEntry);
  const hopper = exportedNames(join(here, '../../src/index.ts'));
  const listed = listedExceptions();

  it('is exported by Hopper, or listed with a reason in docs/compatibility.md', () => {
    expect(bullmq.size).toBeGreaterThan(200);
    const missing = [...bullmq].filter((name) => !hopper.has(name) && !listed.has(name)).sort();
    expect(missing, 'BullMQ exports that Hopper neither exports nor lists in docs/compatibility.md').toEqual([]);
    for (const [name, reason] of listed) expect(reason.length, `${name}: the reason`).toBeGreaterThan(20);
  });

  it('lists only names BullMQ exports and Hopper does not', () => {
    const stale = [...listed.keys()].filter((name) => !bullmq.has(name) || hopper.has(name)).sort();
    expect(stale, 'names docs/compatibility.md lists that Hopper exports, or that BullMQ does not').toEqual([]);
  });
});
