// Builds src/backend/redis/scripts.generated.ts from the Lua scripts (every scripts/*.lua file:
// there is no list to edit when a script is added). Two forms of the same sources:
// - the Redis Functions library (the normal path, FCALL): one library `hopper_<hash>` whose name
//   carries the hash of its source (two Hopper versions can share a server), with every include
//   defined once at load time and every script registered as one function `hopper_<hash>_<name>`
//   that receives (KEYS, ARGV) and starts with the table of named KEYS and ARGV taken from the
//   script's header. Each source line is emitted as one library line, and a line map (library
//   line -> file:line) lets the runner point an error at the source file;
// - one EVALSHA script per operation (the fallback where FUNCTION is denied): `--@include name`
//   lines expanded from scripts/includes/, the same preamble, and the script's SHA1.
// `--check` fails if the file is stale.
// A header line `Flags: allow-oom` becomes the function's flags and the script's shebang
// (`#!lua flags=allow-oom`; a script without flags gets a bare `#!lua`, so Redis applies the same
// rules to the EVALSHA fallback as to the functions): Redis then runs it when full under maxmemory (see
// docs/reliability.md, memory pressure). An include's header line `Per call: <statement>` is run
// at the start of every function (library-level state lives as long as the library, not a call).
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const scriptsDir = join(root, 'src/backend/redis/scripts');
const includesDir = join(scriptsDir, 'includes');
const outFile = join(root, 'src/backend/redis/scripts.generated.ts');
const IDENT = /^[A-Za-z][A-Za-z0-9]*$/;
const FLAGS = new Set(['allow-oom']);

function fail(message) {
  console.error(`generate-scripts: ${message}`);
  process.exit(1);
}

function parseNames(header, label, file) {
  const match = header.match(new RegExp(`^\\s*${label}:\\s*(.*)$`, 'm'));
  if (!match) fail(`${file}: the header has no "${label}:" line`);
  const text = match[1].trim();
  if (text === '' || text.startsWith('(none)')) return { names: [], rest: undefined };
  const parts = text.split(',').map((part) => part.trim());
  let rest;
  if (parts.at(-1).startsWith('...')) rest = parts.pop().slice(3);
  for (const name of [...parts, ...(rest ? [rest] : [])]) {
    if (!IDENT.test(name)) fail(`${file}: "${name}" in ${label} is not a plain identifier`);
  }
  return { names: parts, rest };
}

// Redis script flags named in the header (`Flags: allow-oom (why)`); none when the line is absent.
function parseFlags(header, file) {
  const match = header.match(/^\s*Flags:\s*([\w,\s-]*?)\s*(\(|$)/m);
  if (!match) return [];
  const flags = match[1].split(',').map((flag) => flag.trim());
  for (const flag of flags) if (!FLAGS.has(flag)) fail(`${file}: unknown flag "${flag}" (known: ${[...FLAGS].join(', ')})`);
  return flags;
}

function expandIncludes(source, file, seen = new Set()) {
  return source.replace(/^--@include (\w[\w-]*)\s*$/gm, (_line, name) => {
    if (seen.has(name)) return `-- (include ${name}: already expanded)`;
    seen.add(name);
    const path = join(includesDir, `${name}.lua`);
    if (!existsSync(path)) fail(`${file}: include "${name}" not found in ${includesDir}`);
    return expandIncludes(readFileSync(path, 'utf8'), `${name}.lua`, seen).trimEnd();
  });
}

// The includes a script names, in order (an include's own includes are expanded where they stand).
function includeOrder(source, file) {
  const order = [];
  for (const [, name] of source.matchAll(/^--@include (\w[\w-]*)\s*$/gm)) {
    if (!existsSync(join(includesDir, `${name}.lua`))) fail(`${file}: include "${name}" not found in ${includesDir}`);
    if (!order.includes(name)) order.push(name);
  }
  return order;
}

// What an include defines at its top level and which top-level names of other includes it uses:
// an include is emitted after the includes whose names it uses (unless it pulls them in itself,
// where it stands: `--@include`), so that no name is read as a (missing) global.
const includeText = new Map();
const textOf = (name) => {
  if (!includeText.has(name)) includeText.set(name, readFileSync(join(includesDir, `${name}.lua`), 'utf8'));
  return includeText.get(name);
};
const definedBy = new Map();
function definitions(name) {
  const code = textOf(name);
  const names = new Set();
  for (const [, n] of code.matchAll(/^local function (\w+)/gm)) names.add(n);
  for (const [, list] of code.matchAll(/^local ([\w, ]+?)\s*(?:=|$)/gm)) for (const n of list.split(',')) names.add(n.trim());
  return names;
}
const allIncludes = readdirSync(includesDir)
  .filter((f) => f.endsWith('.lua'))
  .map((f) => f.slice(0, -4))
  .sort();
for (const name of allIncludes) for (const n of definitions(name)) if (!definedBy.has(n)) definedBy.set(n, name);
function usedIncludes(name) {
  const code = textOf(name)
    .replace(/--\[\[[\s\S]*?\]\]/g, '')
    .replace(/--.*$/gm, '')
    .replace(/'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"/g, "''");
  const own = definitions(name);
  const used = new Set();
  for (const [word] of code.matchAll(/\b[A-Za-z_]\w*\b/g)) {
    const by = definedBy.get(word);
    if (by && by !== name && !own.has(word)) used.add(by);
  }
  return used;
}
const nestedIncludes = (name) => new Set([...textOf(name).matchAll(/^--@include (\w[\w-]*)\s*$/gm)].map((m) => m[1]));

// The library's lines, each with the file and line it comes from (for the line map).
const libLines = [];
const emit = (text, file, line) => libLines.push({ text, file, line });
// Emits an include's lines, expanding its own includes where they stand (once in the library).
function emitInclude(name, seen) {
  if (seen.has(name)) return;
  seen.add(name);
  const nested = nestedIncludes(name);
  for (const used of usedIncludes(name)) if (!nested.has(used)) emitInclude(used, seen);
  const file = `includes/${name}.lua`;
  textOf(name)
    .replace(/\n$/, '')
    .split('\n')
    .forEach((text, i) => {
      const include = text.match(/^--@include (\w[\w-]*)\s*$/);
      if (include && !seen.has(include[1])) {
        emit(`-- (include ${include[1]} follows)`, file, i + 1);
        emitInclude(include[1], seen);
      } else emit(include ? `-- (include ${include[1]}: defined above)` : text, file, i + 1);
    });
}

const luaString = (text) => `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;

const entries = [];
const includeOrders = [];
for (const file of readdirSync(scriptsDir)
  .filter((f) => f.endsWith('.lua'))
  .sort()) {
  const name = file.slice(0, -4);
  const raw = readFileSync(join(scriptsDir, file), 'utf8');
  const header = raw.match(/^--\[\[ (\w+): [\s\S]*?\]\]/);
  if (!header) fail(`${file}: it must start with a "--[[ ${name}: what it does ... ]]" header`);
  if (header[1] !== name) fail(`${file}: the header names "${header[1]}", not "${name}"`);
  const keys = parseNames(header[0], 'KEYS', file);
  if (keys.rest) fail(`${file}: KEYS cannot have a rest part`);
  const args = parseNames(header[0], 'ARGV', file);
  const preamble = [
    `local k = { ${keys.names.map((n, i) => `${n} = KEYS[${i + 1}]`).join(', ')} }`,
    `local argv = { ${args.names.map((n, i) => `${n} = ARGV[${i + 1}]`).join(', ')} }`,
    `local REST = ${args.names.length + 1}`,
  ];
  const body = expandIncludes(raw.slice(header[0].length), file);
  const flags = parseFlags(header[0], file);
  // Every script gets a shebang, with or without flags: Redis then treats it as it treats a
  // function (refused as a whole when full under maxmemory unless it allows OOM), where a script
  // without one would be refused only at its first write that can grow memory, after the
  // deletions before it.
  const shebang = flags.length ? `#!lua flags=${flags.join(',')}\n` : '#!lua\n';
  const source = `${shebang}${header[0]}\n${preamble.join('\n')}\n${body.trim()}\n`;
  const sha = createHash('sha1').update(source).digest('hex');
  includeOrders.push(includeOrder(raw, file));
  entries.push({ name, file, raw, keys: keys.names, args: args.names, rest: Boolean(args.rest), flags, preamble, sha, source });
}

// The library: includes first (in one order that suits every script), then one function per script.
const includeNames = [...new Set(includeOrders.flat())];
emit("-- Hopper's Redis Functions library, generated by scripts/generate-scripts.mjs: do not edit.", '(generated)', 0);
const seen = new Set();
for (const name of includeNames) emitInclude(name, seen);
const perCall = [];
for (const name of seen) {
  const header = textOf(name).match(/^--\[\[ (\w+): [\s\S]*?\]\]/);
  const line = header?.[0].match(/^\s*Per call:\s*(\w+\(\))/m);
  if (line) perCall.push(line[1]);
}
for (const e of entries) {
  const flags = e.flags.length ? `, flags = { ${e.flags.map(luaString).join(', ')} }` : '';
  emit(
    `redis.register_function{ function_name = '@FN_${e.name}'${flags}, callback = function(KEYS, ARGV) ` +
      `${perCall.join(' ')} ${e.preamble.join(' ')}`,
    '(generated)',
    0,
  );
  e.raw
    .replace(/\n$/, '')
    .split('\n')
    .forEach((text, i) => emit(/^--@include /.test(text) ? `-- (${text.slice(3)}: defined above)` : text, e.file, i + 1));
  emit('end }', '(generated)', 0);
}
const libraryBody = libLines.map((l) => l.text).join('\n') + '\n';
const libraryHash = createHash('sha1').update(libraryBody).digest('hex').slice(0, 12);
const libraryName = `hopper_${libraryHash}`;
const fnName = (name) => `${libraryName}_${name}`;
const librarySource = `#!lua name=${libraryName}\n${libraryBody.replace(/@FN_(\w+)/g, (_m, name) => fnName(name))}`;
// Line map: runs of library lines that come from one file in order, as [first library line, file
// index, its line in the file]; library line 1 is the shebang.
const files = [];
const lineMap = [];
libLines.forEach((l, i) => {
  const libLine = i + 2;
  const prev = libLines[i - 1];
  if (prev && prev.file === l.file && l.line === prev.line + 1) return;
  if (!files.includes(l.file)) files.push(l.file);
  lineMap.push([libLine, files.indexOf(l.file), l.line]);
});

const lines = [
  '// Generated by scripts/generate-scripts.mjs from src/backend/redis/scripts/*.lua. Do not edit:',
  '// change the .lua files and run `npm run build` (CI checks this file is up to date).',
  '',
  '/**',
  ' * One operation: its named KEYS and ARGV (in order), whether it takes trailing values, its function',
  ' * in the library (FCALL), and its standalone script with SHA1 (the EVALSHA fallback).',
  ' */',
  'export interface ScriptDef {',
  '  readonly name: string;',
  '  readonly keys: readonly string[];',
  '  readonly args: readonly string[];',
  '  readonly rest: boolean;',
  '  readonly fn: string;',
  '  readonly sha: string;',
  '  readonly source: string;',
  '}',
  '',
  '/**',
  ' * The Redis Functions library of every operation: its name (with the hash of its source), its source',
  ' * for FUNCTION LOAD, and where its lines come from: `lineMap` holds runs [library line, index in',
  ' * `files`, line in that file] (a line number 0 is a line the generator wrote).',
  ' */',
  'export const LIBRARY = {',
  `  name: '${libraryName}',`,
  `  files: ${JSON.stringify(files)},`,
  `  lineMap: ${JSON.stringify(lineMap)},`,
  `  source: ${JSON.stringify(librarySource)} as string,`,
  '} as const;',
  '',
  'export const SCRIPTS = {',
  ...entries.map(
    (e) =>
      `  ${e.name}: {\n    name: '${e.name}',\n    keys: ${JSON.stringify(e.keys)},\n    args: ${JSON.stringify(e.args)},\n` +
      `    rest: ${e.rest},\n    fn: '${fnName(e.name)}',\n    sha: '${e.sha}',\n    source: ${JSON.stringify(e.source)} as string,\n  },`,
  ),
  '} as const satisfies Record<string, ScriptDef>;',
  '',
];
const output = lines.join('\n');

if (process.argv.includes('--check')) {
  const current = existsSync(outFile) ? readFileSync(outFile, 'utf8') : '';
  if (current !== output) fail('scripts.generated.ts is out of date: run `npm run build` and commit it.');
  console.log(`generate-scripts: ${entries.length} scripts and library ${libraryName}, up to date.`);
} else {
  writeFileSync(outFile, output);
  console.log(`generate-scripts: wrote ${entries.length} scripts and library ${libraryName} (${libLines.length + 1} lines).`);
}
