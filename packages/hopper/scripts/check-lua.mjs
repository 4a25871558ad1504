// Static checks of the Lua layer (run by `npm run lint`), for the rules a script cannot break
// without risking a half-done change (Redis does not roll back a script that errors):
// - every script and include starts with its header (`--[[ name: what it does ...`); a script's
//   header names its KEYS (at least one: the keys route the call in Redis Cluster), ARGV and
//   Returns;
// - `unpack(` appears only in includes/chunked.lua: every list passed to a variadic command goes
//   through `chunked(...)`, which sends at most 1,000 values per call (Lua's unpack fails past
//   ~8,000 values, after the script may have written);
// - an include never reads KEYS, ARGV or REST (nor the script's `argv` table): in the Redis
//   Functions library the includes are defined once at load time, outside any call, where those
//   do not exist (the script passes what the helper needs). The script's `k` table is not checked
//   here (many helpers take a parameter named k); a helper that read it would fail every test that
//   reaches it ("Script attempted to access nonexistent global variable").
import { readdirSync, readFileSync } from 'node:fs';
import { join, dirname, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const scriptsDir = join(root, 'src/backend/redis/scripts');
const includesDir = join(scriptsDir, 'includes');
const CHUNK_HELPER = join(includesDir, 'chunked.lua');

const problems = [];
const luaFiles = (dir) =>
  readdirSync(dir)
    .filter((f) => f.endsWith('.lua'))
    .sort()
    .map((f) => join(dir, f));

function withoutComments(source) {
  // Block comments keep their line breaks, so reported line numbers stay the file's.
  return source.replace(/--\[\[[\s\S]*?\]\]/g, (block) => block.replace(/[^\n]/g, '')).replace(/--.*$/gm, '');
}

function check(path, isInclude) {
  const name = relative(scriptsDir, path);
  const base = path.split('/').pop().slice(0, -4);
  const source = readFileSync(path, 'utf8');
  const header = source.match(/^--\[\[ (\w+): [\s\S]*?\]\]/);
  if (!header) {
    problems.push(`${name}: no header: start with "--[[ ${base}: what it does ... ]]" (see docs/architecture.md, The Lua layer)`);
  } else {
    if (header[1] !== base) problems.push(`${name}: the header names "${header[1]}", not "${base}"`);
    if (!isInclude) {
      for (const label of ['KEYS', 'ARGV', 'Returns']) {
        if (!new RegExp(`^\\s*${label}:`, 'm').test(header[0])) problems.push(`${name}: the header has no "${label}:" line`);
      }
      const keys = header[0].match(/^\s*KEYS:\s*(.*)$/m);
      if (keys && (keys[1].trim() === '' || keys[1].trim().startsWith('(none)'))) {
        problems.push(`${name}: KEYS is empty: declare the keys the script touches (they route the call to its Redis Cluster slot)`);
      }
    }
  }
  if (isInclude) {
    withoutComments(source)
      .split('\n')
      .forEach((line, i) => {
        const text = line.replace(/'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"/g, "''");
        const used = text.match(/(?<![\w.])(KEYS|ARGV|REST|argv)\b/);
        if (used) {
          problems.push(
            `${name}:${i + 1}: an include reads "${used[1]}": pass it from the script (includes are defined once in the Functions library, outside any call)`,
          );
        }
      });
  }
  if (path !== CHUNK_HELPER) {
    const code = withoutComments(source);
    code.split('\n').forEach((line, i) => {
      if (/\bunpack\s*\(/.test(line)) {
        problems.push(`${name}:${i + 1}: unpack( outside includes/chunked.lua: pass the list to chunked(cmd, key, list[, width])`);
      }
    });
  }
}

for (const path of luaFiles(scriptsDir)) check(path, false);
for (const path of luaFiles(includesDir)) check(path, true);

if (problems.length > 0) {
  console.error(`check-lua: ${problems.length} problem(s):\n  ${problems.join('\n  ')}`);
  process.exit(1);
}
console.log('check-lua: every script has its header and keys; unpack only in includes/chunked.lua.');
