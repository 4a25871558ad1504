/**
 * The README's code runs: every ```js block marked `<!-- readme-test: run -->` is extracted from
 * README.md itself, written to a file inside the repository (so `hopper` and the workspace
 * packages resolve) and run with Node against the test Redis (REDIS_URL); it must exit 0, and
 * each `// prints: <text>` comment in it must appear in its output. Every ```js or ```ts block
 * carries a marker, `run` or `skip (<reason>)`, so a new example cannot be left out silently;
 * shell, diff, text and config blocks are not run. Uses the built packages (npm test builds them).
 */
import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { flushDatabase } from '../helpers/connections.js';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../../../../', import.meta.url));
const readme = readFileSync(`${root}README.md`, 'utf8');
// Under node_modules/.cache so the packages resolve from it, and nothing lands in the work tree.
const dir = `${root}node_modules/.cache/hopper-readme-${process.pid}/`;

interface Block {
  line: number;
  heading: string;
  lang: string;
  marker: string | undefined;
  code: string;
}

/** The fenced blocks of a Markdown text, each with the marker comment on the line before it. */
export function fencedBlocks(markdown: string): Block[] {
  const lines = markdown.split('\n');
  const blocks: Block[] = [];
  let heading = '';
  for (let i = 0; i < lines.length; i++) {
    if (/^#{1,4} /.test(lines[i])) heading = lines[i].replace(/^#+ /, '');
    const open = /^(\s*)```(\w*)\s*$/.exec(lines[i]);
    if (!open) continue;
    const indent = open[1].length;
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && !/^\s*```\s*$/.test(lines[i]); i++) body.push(lines[i].slice(indent));
    const marker = /<!-- readme-test: (.*?) -->/.exec(lines[start - 1] ?? '')?.[1];
    blocks.push({ line: start + 1, heading, lang: open[2], marker, code: body.join('\n') });
  }
  return blocks;
}

const blocks = fencedBlocks(readme);
const code = blocks.filter((b) => b.lang === 'js' || b.lang === 'ts');
const runnable = code.filter((b) => b.marker === 'run');

/**
 * The README's examples use Hopper's default prefix, as a reader's code would: each block runs in
 * a logical database of its own (1 to 15), emptied first, so blocks running side by side, a second
 * `npm test` on the same REDIS_URL, and the other tests (database 0) never meet.
 */
async function databaseFor(block: Block): Promise<string> {
  const db = runnable.indexOf(block) + 1;
  if (db > 15)
    throw new Error(`README.md has more than 15 runnable blocks: give readme.test.ts more databases (block at line ${block.line}).`);
  const url = new URL(inject('redisUrl'));
  url.pathname = `/${db}`;
  await flushDatabase(url.toString());
  return url.toString();
}

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('README', () => {
  it('marks every JavaScript and TypeScript block: run, or skip with a reason', () => {
    const unmarked = code.filter((b) => b.marker !== 'run' && !/^skip \(.+\)$/.test(b.marker ?? ''));
    expect(unmarked.map((b) => `README.md:${b.line} (${b.heading}) has no <!-- readme-test: run --> or skip (reason) marker`)).toEqual([]);
    expect(code.filter((b) => b.marker === 'run' && b.lang !== 'js').map((b) => `README.md:${b.line} is run: write it in js`)).toEqual([]);
    expect(runnable.length).toBeGreaterThanOrEqual(10);
  });

  it.concurrent.each(runnable.map((b) => [`${b.heading} (README.md:${b.line})`, b] as const))('%s runs', async (_name, block) => {
    mkdirSync(dir, { recursive: true });
    const file = `${dir}block-${block.line}.mjs`;
    writeFileSync(file, `${block.code}\n`);
    let stdout = '';
    const redisUrl = await databaseFor(block);
    try {
      ({ stdout } = await run(process.execPath, [file], {
        cwd: root,
        env: { ...process.env, REDIS_URL: redisUrl },
        timeout: 20_000,
      }));
    } catch (err) {
      const { stdout: out = '', stderr = '' } = err as { stdout?: string; stderr?: string };
      throw new Error(
        `README.md:${block.line} (${block.heading}) failed: ${(err as Error).message}\n--- stdout\n${out}\n--- stderr\n${stderr}`,
      );
    }
    for (const [, expected] of block.code.matchAll(/\/\/ prints: (.*)$/gm)) {
      expect(stdout, `README.md:${block.line} (${block.heading}) should print "${expected}"`).toContain(expected.trim());
    }
  });
});
