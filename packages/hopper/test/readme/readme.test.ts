/**
 * The documentation's code runs: every ```js block marked `<!-- readme-test: run -->` is extracted
 * from README.md and the guides that carry examples (DOCUMENTS), written to a file inside the
 * repository (so `hopper-queue` and the workspace packages resolve) and run with Node against the
 * test Redis (REDIS_URL); it must exit 0, and each `// prints: <text>` comment in it must appear in
 * its output. Every ```js or ```ts block of those documents carries a marker, `run` or `skip
 * (<reason>)`, so a new example cannot be left out silently; shell, diff, text and config blocks are
 * not run. Uses the built packages (npm test builds them).
 */
import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { flushDatabase } from '../helpers/connections.js';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../../../../', import.meta.url));
/** The documents whose examples are run, relative to the repository's root. */
const DOCUMENTS = ['README.md', 'docs/guide.md', 'docs/production.md'];
// Under node_modules/.cache so the packages resolve from it, and nothing lands in the work tree.
const dir = `${root}node_modules/.cache/hopper-readme-${process.pid}/`;

interface Block {
  /** The document it is in, e.g. `docs/guide.md`. */
  file: string;
  line: number;
  heading: string;
  lang: string;
  marker: string | undefined;
  code: string;
}

/** The fenced blocks of a Markdown text, each with the marker comment on the line before it. */
export function fencedBlocks(markdown: string, file = 'README.md'): Block[] {
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
    blocks.push({ file, line: start + 1, heading, lang: open[2], marker, code: body.join('\n') });
  }
  return blocks;
}

const blocks = DOCUMENTS.flatMap((file) => fencedBlocks(readFileSync(`${root}${file}`, 'utf8'), file));
const code = blocks.filter((b) => b.lang === 'js' || b.lang === 'ts');
const runnable = code.filter((b) => b.marker === 'run');
const where = (b: Block) => `${b.file}:${b.line} (${b.heading})`;

/**
 * The examples use Hopper's default prefix, as a reader's code would: each runs in a logical
 * database of its own (1 to 15), emptied first, so examples running side by side, a second `npm
 * test` on the same REDIS_URL, and the other tests (database 0) never meet. Beyond 15 examples, the
 * examples sharing a database run one after the other (a lane per database).
 */
const DATABASES = 15;
const lanes: Block[][] = Array.from({ length: Math.min(DATABASES, runnable.length) }, (_, i) =>
  runnable.filter((_, j) => j % DATABASES === i),
);

async function database(db: number): Promise<string> {
  const url = new URL(inject('redisUrl'));
  url.pathname = `/${db}`;
  await flushDatabase(url.toString());
  return url.toString();
}

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the examples of README.md and the guides', () => {
  it('marks every JavaScript and TypeScript block: run, or skip with a reason', () => {
    const unmarked = code.filter((b) => b.marker !== 'run' && !/^skip \(.+\)$/.test(b.marker ?? ''));
    expect(unmarked.map((b) => `${where(b)} has no <!-- readme-test: run --> or skip (reason) marker`)).toEqual([]);
    expect(code.filter((b) => b.marker === 'run' && b.lang !== 'js').map((b) => `${where(b)} is run: write it in js`)).toEqual([]);
    expect(runnable.filter((b) => b.file === 'README.md').length).toBeGreaterThanOrEqual(1);
    expect(runnable.length).toBeGreaterThanOrEqual(15);
  });

  it.concurrent.each(lanes.map((lane, i) => [lane.map(where).join(' then '), lane, i + 1] as const))('%s runs', async (_name, lane, db) => {
    mkdirSync(dir, { recursive: true });
    for (const block of lane) {
      const file = `${dir}block-${block.file.replace(/\W/g, '-')}-${block.line}.mjs`;
      writeFileSync(file, `${block.code}\n`);
      let stdout = '';
      const redisUrl = await database(db);
      try {
        ({ stdout } = await run(process.execPath, [file], {
          cwd: root,
          env: { ...process.env, REDIS_URL: redisUrl },
          timeout: 20_000,
        }));
      } catch (err) {
        const { stdout: out = '', stderr = '' } = err as { stdout?: string; stderr?: string };
        throw new Error(`${where(block)} failed: ${(err as Error).message}\n--- stdout\n${out}\n--- stderr\n${stderr}`);
      }
      for (const [, expected] of block.code.matchAll(/\/\/ prints: (.*)$/gm)) {
        expect(stdout, `${where(block)} should print "${expected}"`).toContain(expected.trim());
      }
    }
  });
});
