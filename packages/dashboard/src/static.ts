/**
 * Serving the web UI: the files Vite built into `dist/ui` (hashed assets, cached for a year;
 * `index.html` never cached), read once into memory. Only files that exist in the build are
 * served: a path is a key of that map, never joined onto the file system.
 */
import { readdir, readFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { here } from './here.cjs';

/** One built file. */
export interface Asset {
  body: Uint8Array;
  type: string;
  /** Its Cache-Control. */
  cache: string;
}

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.woff2': 'font/woff2',
};

/**
 * Where the built UI is, one folder shared by both builds: dist/ui, beside the ES module build
 * (dist), one level up from the CommonJS build (dist/cjs), or under dist when running from src (tests).
 */
const CANDIDATES = basename(here) === 'cjs' ? [join(here, '..', 'ui')] : [join(here, 'ui'), join(here, '..', 'dist', 'ui')];

async function walk(dir: string, prefix = ''): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    if (entry.isDirectory()) out.push(...(await walk(join(dir, entry.name), `${prefix}${entry.name}/`)));
    else out.push(`${prefix}${entry.name}`);
  }
  return out;
}

/** Loads the built UI (path relative to the base path -> asset), or null when it was not built. */
export async function loadAssets(): Promise<Map<string, Asset> | null> {
  for (const dir of CANDIDATES) {
    let files: string[];
    try {
      files = await walk(dir);
    } catch {
      continue;
    }
    if (!files.includes('index.html')) continue;
    const assets = new Map<string, Asset>();
    for (const file of files) {
      const ext = file.slice(file.lastIndexOf('.'));
      assets.set(file, {
        body: new Uint8Array(await readFile(join(dir, file))),
        type: TYPES[ext] ?? 'application/octet-stream',
        cache: file.startsWith('assets/') ? 'public, max-age=31536000, immutable' : 'no-store',
      });
    }
    return assets;
  }
  return null;
}
