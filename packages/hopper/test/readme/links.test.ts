/**
 * The documentation's links hold: every relative link in README.md and docs/*.md points at a file
 * or folder of the repository, and every `#anchor` (in the same page or another) at a heading of
 * the page it names. A page moved or a heading renamed must take its links along.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../../../', import.meta.url));
const pages = [
  'README.md',
  ...readdirSync(join(root, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens. */
export function anchorOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** The anchors of a Markdown page's headings (outside fenced blocks), numbered as GitHub does for repeats. */
function anchors(markdown: string): Set<string> {
  const out = new Set<string>();
  const seen = new Map<string, number>();
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (/^\s*```/.test(line)) fenced = !fenced;
    const m = !fenced && /^#{1,6} (.*)$/.exec(line);
    if (!m) continue;
    const base = anchorOf(m[1]);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

/** The relative links of a page (inline Markdown links outside fenced blocks and code spans). */
function links(markdown: string): { target: string; line: number }[] {
  const out: { target: string; line: number }[] = [];
  let fenced = false;
  markdown.split('\n').forEach((line, i) => {
    if (/^\s*```/.test(line)) fenced = !fenced;
    if (fenced) return;
    const text = line.replace(/`[^`]*`/g, '');
    for (const m of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (!/^[a-z]+:/i.test(m[1])) out.push({ target: m[1], line: i + 1 });
    }
  });
  return out;
}

describe('documentation links', () => {
  it('computes GitHub anchors', () => {
    expect(anchorOf("BullMQ's own test suite")).toBe('bullmqs-own-test-suite');
    expect(anchorOf('Latest results, side by side with BullMQ')).toBe('latest-results-side-by-side-with-bullmq');
  });

  it.each(pages)('%s: every relative link and anchor resolves', (page) => {
    const text = readFileSync(join(root, page), 'utf8');
    const broken: string[] = [];
    for (const { target, line } of links(text)) {
      const [path, anchor] = target.split('#') as [string, string | undefined];
      const file = path === '' ? join(root, page) : join(root, dirname(page), decodeURIComponent(path));
      if (!existsSync(file)) {
        broken.push(`${page}:${line} links to ${target}: ${relative(root, file)} does not exist`);
        continue;
      }
      if (anchor && statSync(file).isFile() && file.endsWith('.md') && !anchors(readFileSync(file, 'utf8')).has(anchor)) {
        broken.push(`${page}:${line} links to ${target}: no heading with that anchor in ${relative(root, file)}`);
      }
    }
    expect(broken).toEqual([]);
  });
});
