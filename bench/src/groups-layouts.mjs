// What taking a grouped job costs Redis, by data layout: `node bench/src/groups-layouts.mjs`.
//
// Issue 21's groups bar asks a queue whose jobs are spread over 1,000 groups to keep 0.85 of the
// throughput of the same queue without groups. That throughput is bound by Redis's CPU per job, so
// this measures what a claim spends per job in Redis under four layouts of the ready jobs, with a
// small Functions library of its own (a model of a claim, not Hopper's scripts): every variant
// claims 50 jobs per call and, per job, reads the job's hash (HMGET of 12 fields) and marks it
// active (HSET), as Hopper's claim does; they differ only in how the jobs are found.
// - `ungrouped`: one list of ready jobs, LPOP of 50 (Hopper's `wait` without groups);
// - `group-zsets`: Hopper's layout, a ring (list) of ready groups, each group's jobs in a sorted
//   set of its own (priority, then FIFO): one ZPOPMIN per group turn, the ring popped and pushed in
//   batches;
// - `group-lists`: the same ring, each group's jobs in a list (FIFO only, no priorities): one LPOP
//   per group turn;
// - `one-set`: every ready grouped job in one sorted set by virtual time (a group's n-th job at
//   turn n: round-robin order), plus one index sorted set by group (lexicographic members
//   `group|seq|id`) for what reads a group's jobs (listing, counts, maxSize, removal): ZPOPMIN of
//   50 and one ZREM of the same 50 members.
// Jobs are spread round-robin over the groups (job i in group i mod groups), as in the bench's
// groups scenario. Rounds alternate the variants; figures are medians of Redis's own accounting
// (INFO commandstats: the µs of the script calls, their inner commands included).
// Method and figures: docs/performance.md, "Issue 21, fifth round".

import { parseArgs } from 'node:util';
import { startRedis } from './redis/server.mjs';
import { parseInfo } from './redis/client.mjs';

const { values } = parseArgs({
  options: { jobs: { type: 'string' }, groups: { type: 'string' }, rounds: { type: 'string' } },
});
const JOBS = Number(values.jobs ?? 20_000);
const GROUPS = Number(values.groups ?? 1_000);
const ROUNDS = Number(values.rounds ?? 7);
const BATCH = 50;
if (!Number.isInteger(JOBS) || JOBS < 1_000) throw new Error(`--jobs must be an integer >= 1000, not "${values.jobs}"`);
if (!Number.isInteger(GROUPS) || GROUPS < 1 || GROUPS > JOBS)
  throw new Error(`--groups must be an integer from 1 to --jobs, not "${values.groups}"`);
if (!Number.isInteger(ROUNDS) || ROUNDS < 1) throw new Error(`--rounds must be a positive integer, not "${values.rounds}"`);

const LIBRARY = `#!lua name=groupslayouts
-- What every claim does per job: read it, mark it active.
local function take(ids, grouped)
  for i = 1, #ids do
    local jk = 'j:' .. ids[i]
    redis.call('HMGET', jk, 'n', 'd', 'o', 't', 'am', 'as', 'p', 'dl', 'pg', 'dc', 'sc', 'fr')
    if grouped then
      redis.call('HSET', jk, 's', 'active', 'tk', 'w:' .. i, 'as', '1', 'po', '1', 'ga', '0')
    else
      redis.call('HSET', jk, 's', 'active', 'tk', 'w:' .. i, 'as', '1', 'po', '1')
    end
  end
  return #ids
end

local function ungrouped(_keys, args)
  local ids = redis.call('LPOP', 'wait', args[1])
  if not ids then return 0 end
  return take(ids, false)
end

-- The ring of ready groups ('p' .. group), one job per group turn from its own structure.
local function ringClaim(want, popOne)
  local batch = redis.call('LPOP', 'ring', want)
  if not batch then return 0 end
  local ids, tail = {}, {}
  for j = 1, #batch do
    local member = batch[j]
    local id = popOne(string.sub(member, 2))
    if id then
      ids[#ids + 1] = id
      tail[#tail + 1] = member
    end
  end
  -- At most 50 members (the batch): within unpack's limits.
  if #tail > 0 then redis.call('RPUSH', 'ring', unpack(tail)) end
  return take(ids, true)
end

local function groupZsets(_keys, args)
  return ringClaim(args[1], function(g)
    return redis.call('ZPOPMIN', 'gq:' .. g)[1]
  end)
end

local function groupLists(_keys, args)
  return ringClaim(args[1], function(g)
    return redis.call('LPOP', 'gl:' .. g) or nil
  end)
end

local function oneSet(_keys, args)
  local popped = redis.call('ZPOPMIN', 'vt', args[1])
  if #popped == 0 then return 0 end
  local ids, members = {}, {}
  for i = 1, #popped, 2 do
    local m = popped[i]
    members[#members + 1] = m
    local bar = string.find(m, '|', string.find(m, '|', 1, true) + 1, true)
    ids[#ids + 1] = string.sub(m, bar + 1)
  end
  redis.call('ZREM', 'gidx', unpack(members))
  return take(ids, true)
end

redis.register_function('ungrouped', ungrouped)
redis.register_function('group_zsets', groupZsets)
redis.register_function('group_lists', groupLists)
redis.register_function('one_set', oneSet)
`;

// Fills the layout (bounded: one call per 1,000 jobs).
const FILL = `
local from, to, groups, layout = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4]
for i = from, to do
  local id = tostring(i)
  local g = 'g' .. (i % groups)
  redis.call('HSET', 'j:' .. id, 'n', 'job', 't', '1796298851629', 'g', g,
    'o', '{"removeOnComplete":true,"group":{"id":"' .. g .. '"}}', 'd', '{"n":' .. id .. '}', 's', 'waiting')
  if layout == 'ungrouped' then
    redis.call('RPUSH', 'wait', id)
  elseif layout == 'one_set' then
    local m = g .. '|' .. string.format('%012d', i) .. '|' .. id
    redis.call('ZADD', 'vt', math.floor(i / groups), m)
    redis.call('ZADD', 'gidx', 0, m)
  else
    if layout == 'group_zsets' then redis.call('ZADD', 'gq:' .. g, i, id) else redis.call('RPUSH', 'gl:' .. g, id) end
    if i <= groups then redis.call('RPUSH', 'ring', 'p' .. g) end
  end
end
return 0
`;

const LAYOUTS = ['ungrouped', 'group_zsets', 'group_lists', 'one_set'];
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const redis = await startRedis();
const { control } = redis;
const samples = Object.fromEntries(LAYOUTS.map((l) => [l, []]));
try {
  await control.command('FUNCTION', 'LOAD', 'REPLACE', LIBRARY);
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? LAYOUTS : [...LAYOUTS].reverse();
    for (const layout of order) {
      await control.command('FLUSHALL');
      for (let from = 1; from <= JOBS; from += 1_000) {
        await control.command('EVAL', FILL, '0', String(from), String(Math.min(from + 999, JOBS)), String(GROUPS), layout);
      }
      await control.command('CONFIG', 'RESETSTAT');
      let claimed = 0;
      while (claimed < JOBS) {
        const n = Number(await control.command('FCALL', layout, '0', String(BATCH)));
        if (n === 0) throw new Error(`${layout}: claimed nothing with ${JOBS - claimed} jobs left`);
        claimed += n;
      }
      const stats = parseInfo(String(await control.command('INFO', 'commandstats')));
      const usec = Number(/usec=(\d+)/.exec(stats.get('cmdstat_fcall') ?? '')?.[1] ?? NaN);
      samples[layout].push(usec / JOBS);
    }
  }
} finally {
  redis.killNow();
}
const base = median(samples.ungrouped);
console.log(`Redis ${redis.version}: ${JOBS} jobs over ${GROUPS} groups, ${BATCH} per claim, medians of ${ROUNDS} rounds`);
for (const layout of LAYOUTS) {
  const us = median(samples[layout]);
  const extra = layout === 'ungrouped' ? '' : `, +${(us - base).toFixed(2)} µs per job, ungrouped/this ${(base / us).toFixed(2)}`;
  console.log(
    `${layout.padEnd(12)} ${us.toFixed(2)} µs per job [${Math.min(...samples[layout]).toFixed(2)}-${Math.max(...samples[layout]).toFixed(2)}]${extra}`,
  );
}
