// The packaging check (`npm run check:packaging`, a step of `npm test`): what a user installs from
// the registry, checked the way users consume it. Run after `npm run build`.
//
// 1. `npm pack` every package, as it would be published.
// 2. publint on every package, and @arethetypeswrong/cli on every tarball with entry points
//    (node10, node16 from CJS and from ESM, bundler); a package that ships ES modules only would be
//    checked with attw's esm-only profile (see ESM_ONLY: none today).
// 3. Fixture projects (scripts/packaging/fixtures/) get the tarballs unpacked into their own
//    node_modules, and nothing else: the tools and the packages' dependencies (ioredis, jest,
//    typescript...) are found in this repository's node_modules, one level up, as Node, Jest and
//    TypeScript all resolve them. So the check needs no network, only `npm ci` once.
//    - esm:        Node, `import` of every entry point of every package; a job added and processed;
//    - cjs:        Node, `require()` of hopper-queue, its subpaths, hopper-queue-metrics,
//                  hopper-queue-dashboard and its redaction subpath, and hopper-queue-bull-board with
//                  require(esm) switched off (an ES module anywhere in the require graph fails): a job
//                  added and processed, a HopperAdapter constructed, the dashboard serving its web UI
//                  and its API on a loopback port; and through require(esm) hopper-queue-nestjs (whose
//                  CommonJS build loads Nest 12, itself ESM only);
//    - jest-ts:    Jest + ts-jest (type checking on), default config; a job added and processed, a
//                  HopperAdapter constructed, the dashboard serving its web UI and its API;
//    - jest-babel: Jest + babel-jest (presets env and typescript), default config; the same;
//    - vitest:     vitest, default config; a job added and processed, the dashboard serving its
//                  web UI and its API;
//    - types:      tsc on code using every entry point, with `skipLibCheck: false`, under
//                  moduleResolution node10 (module commonjs), node16, nodenext and bundler; and
//                  typescript-eslint's only-throw-error on code throwing Hopper's errors.
//
// Redis: REDIS_URL when set, else a throwaway redis-server on a free port (stopped at the end).
// Each fixture uses a key prefix of its own. Output: one line per step, then "N passed, N failed".
// Env: HOPPER_PACKAGING_WORK (default <repo>/.packaging-work, deleted first: it must sit inside the
// repository so that its node_modules resolution reaches the repository's own).
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, readdirSync, renameSync, rmSync, existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = fileURLToPath(new URL('../..', import.meta.url));
const fixtures = fileURLToPath(new URL('./fixtures', import.meta.url));
const work = resolve(process.env.HOPPER_PACKAGING_WORK ?? join(repo, '.packaging-work'));
const bin = (name) => join(repo, 'node_modules/.bin', name);

/** The packages and their folders. */
const PACKAGES = {
  'hopper-queue': 'packages/hopper',
  'hopper-queue-metrics': 'packages/metrics',
  'hopper-queue-dashboard': 'packages/dashboard',
  'hopper-queue-cli': 'packages/cli',
  'hopper-queue-nestjs': 'packages/nestjs',
  'hopper-queue-bull-board': 'packages/bull-board',
};
/** Packages that ship ES modules only (no CommonJS build), checked with attw's esm-only profile: none (every package ships both builds). */
const ESM_ONLY = new Set([]);
/** Packages with no entry point to import (a command only): publint, no attw. */
const BIN_ONLY = new Set(['hopper-queue-cli']);

const results = [];

/** Runs a command; resolves to { code, output }. */
function run(cmd, args, opts = {}) {
  return new Promise((done) => {
    const child = spawn(cmd, args, { cwd: opts.cwd ?? repo, env: { ...process.env, ...opts.env }, stdio: ['ignore', 'pipe', 'pipe'] });
    const out = [];
    child.stdout.on('data', (c) => out.push(c));
    child.stderr.on('data', (c) => out.push(c));
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 300_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      done({ code: code ?? 1, output: Buffer.concat(out).toString() });
    });
  });
}

/** Runs one named step; records and prints its outcome (and the output of a failure). */
async function step(name, cmd, args, opts) {
  const started = Date.now();
  const { code, output } = await run(cmd, args, opts);
  const ok = code === 0 && (opts?.expect === undefined || opts.expect.test(output));
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  results.push({ name, ok });
  console.log(`${ok ? 'passed' : 'FAILED'}  ${name} (${seconds} s)`);
  if (!ok) console.log(output.replace(/^/gm, '    '));
  return ok;
}

async function freePort() {
  const server = createServer();
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address();
  await new Promise((r) => server.close(r));
  return port;
}

/** REDIS_URL, or a throwaway redis-server: { url, stop }. */
async function redis() {
  if (process.env.REDIS_URL) return { url: process.env.REDIS_URL, stop: () => {} };
  const port = await freePort();
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
    stdio: 'ignore',
  });
  for (let i = 0; i < 100; i++) {
    if (
      spawnSync('redis-cli', ['-p', String(port), 'ping'])
        .stdout?.toString()
        .trim() === 'PONG'
    )
      break;
    await new Promise((r) => setTimeout(r, 50));
  }
  return { url: `redis://127.0.0.1:${port}`, stop: () => child.kill() };
}

const t0 = Date.now();
rmSync(work, { recursive: true, force: true });
mkdirSync(join(work, 'tarballs'), { recursive: true });

// 1. The tarballs.
for (const [name, dir] of Object.entries(PACKAGES)) {
  if (!existsSync(join(repo, dir, 'dist'))) {
    console.error(`${dir}/dist is missing: run npm run build first.`);
    process.exit(2);
  }
  const packed = await run('npm', ['pack', '--silent', '--pack-destination', join(work, 'tarballs')], { cwd: join(repo, dir) });
  if (packed.code !== 0) {
    console.error(`npm pack ${name} failed:\n${packed.output}`);
    process.exit(2);
  }
}
const tarballs = Object.fromEntries(
  readdirSync(join(work, 'tarballs')).map((file) => [file.replace(/-\d+\.\d+\.\d+.*\.tgz$/, ''), join(work, 'tarballs', file)]),
);

// 2. publint and attw, a few at a time.
const lint = [];
for (const [name, dir] of Object.entries(PACKAGES)) {
  lint.push(() => step(`publint ${name}`, bin('publint'), ['--strict', join(repo, dir)]));
  if (BIN_ONLY.has(name)) continue;
  const profile = ESM_ONLY.has(name) ? ['--profile', 'esm-only'] : [];
  lint.push(() =>
    step(`attw ${name}${profile.length ? ' (esm-only)' : ''}`, bin('attw'), [tarballs[name], '--format', 'ascii', ...profile]),
  );
}
await Promise.all(
  [0, 1, 2].map(async (lane) => {
    for (let i = lane; i < lint.length; i += 3) await lint[i]();
  }),
);

// 3. The fixture projects: each a copy of its folder with the tarballs unpacked into node_modules.
const modules = join(work, 'node_modules');
mkdirSync(modules);
for (const [name, tarball] of Object.entries(tarballs)) {
  const into = join(work, 'unpack', name);
  mkdirSync(into, { recursive: true });
  const untar = spawnSync('tar', ['-xzf', tarball, '-C', into]);
  if (untar.status !== 0) throw new Error(`tar ${tarball}: ${untar.stderr}`);
  renameSync(join(into, 'package'), join(modules, name));
}
for (const fixture of readdirSync(fixtures)) cpSync(join(fixtures, fixture), join(work, fixture), { recursive: true });

const server = await redis();
const env = (fixture) => ({ HOPPER_FIXTURE_REDIS: server.url, HOPPER_FIXTURE_PREFIX: `hopper-packaging-${process.pid}-${fixture}` });
try {
  const node = process.execPath;
  await Promise.all([
    (async () => {
      await step('esm: Node import, every entry point; a job processed', node, ['app.mjs'], { cwd: join(work, 'esm'), env: env('esm') });
      await step('cjs: Node require(), require(esm) off; a job processed', node, ['--no-experimental-require-module', 'app.cjs'], {
        cwd: join(work, 'cjs'),
        env: env('cjs'),
      });
      await step('cjs: hopper-queue-nestjs (Nest 12) through require(esm)', node, ['--no-warnings', 'esm-only.cjs'], {
        cwd: join(work, 'cjs'),
      });
      await step("types: typescript-eslint's only-throw-error on throws of Hopper's errors", bin('eslint'), ['hopper.cts', 'hopper.mts'], {
        cwd: join(work, 'types'),
      });
      for (const mode of ['node10', 'node16', 'nodenext', 'bundler']) {
        await step(`types: tsc, moduleResolution ${mode}`, bin('tsc'), ['-p', `tsconfig.${mode}.json`], { cwd: join(work, 'types') });
      }
    })(),
    (async () => {
      for (const fixture of ['jest-ts', 'jest-babel']) {
        await step(`${fixture}: Jest; a job processed`, bin('jest'), ['--ci', '--rootDir', '.'], {
          cwd: join(work, fixture),
          env: env(fixture),
          expect: /Tests:\s+1 passed, 1 total/,
        });
      }
      await step('vitest: a job processed', bin('vitest'), ['run', '--root', '.'], {
        cwd: join(work, 'vitest'),
        env: env('vitest'),
        expect: /Tests\s+.*1 passed/,
      });
    })(),
  ]);
} finally {
  server.stop();
}

const failed = results.filter((r) => !r.ok).length;
console.log(`\npackaging check: ${Math.round((Date.now() - t0) / 1000)} s`);
console.log(`${results.length - failed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
