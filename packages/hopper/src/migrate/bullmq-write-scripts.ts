/**
 * The scripts the way back (`hopper migrate --to-bullmq`) runs on BullMQ's Redis to write jobs and
 * job schedulers in BullMQ 5.x / 6.x's layout. Hopper's own code, written from BullMQ's
 * observable layout (see bullmq-keys.ts and docs/migrating.md): a job is the hash
 * `prefix:queue:<id>` (name, data, opts with BullMQ's short option names, timestamp, delay,
 * priority, atm / ats / stc, processedOn, finishedOn, returnvalue, failedReason, stacktrace,
 * progress, pb, deid, rjk) with its logs in `:logs`; waiting jobs are in the `wait` list (the
 * tail runs next; BullMQ 5 keeps a paused queue's in `paused`), prioritized ones in a sorted set
 * scored priority * 2^32 + a counter (`pc`), delayed ones scored due * 4096 + an order within
 * the ms, finished ones by finish time; the `marker` sorted set wakes idle workers (member "0":
 * a job is ready; "1" scored with the next due time: a delayed job). Each script reads before its
 * first write, and a job or scheduler already in BullMQ is left as it is (the copy there wins:
 * a re-run after a crash between writing there and deleting here finds it).
 */
import { bullScript } from './bullmq-scripts.js';

/**
 * writeJobs: writes a batch of jobs with their ids, each in its state.
 * KEYS: meta, id, wait, paused, prioritized, pc, delayed, completed, failed, marker
 * ARGV: base, layout major version (5 | 6), ...jobs (JSON: i id, n name, d data, o opts JSON,
 *   t timestamp, dl delay, p priority, am / as / sc attempts made / started / stalls, po / fo
 *   processedOn / finishedOn, rv return value, fr failed reason, st stack traces JSON, pg
 *   progress, pb processedBy, lg log lines (oldest first), de { i id, t ttl ms, 0: until it
 *   finishes }, s state (waiting, prioritized, delayed, failed, completed), fr_ 1: at the head
 *   of waiting (runs next), du due ms (delayed)). Jobs come in run order.
 * Returns: per job 0 already there (nothing written), else 1 + 2 (its deduplication id is held
 *   by another BullMQ job: not taken).
 */
export const WRITE_JOBS = bullScript(
  'writeJobs',
  `
local base, major = ARGV[1], ARGV[2]
local function int(n) return string.format('%.0f', n) end
local jobs, out = {}, {}
local meta = redis.call('HMGET', KEYS[1], 'paused')
local paused = meta[1] ~= false
local readyList = KEYS[3]
if paused and major == '5' then readyList = KEYS[4] end
for i = 3, #ARGV do
  local j = cjson.decode(ARGV[i])
  j.flags = 1
  if redis.call('EXISTS', base .. j.i) == 1 then
    j.flags = 0
  elseif type(j.de) == 'table' then
    local holder = redis.call('GET', base .. 'de:' .. j.de.i)
    if holder and holder ~= j.i then j.flags = 3 end
  end
  jobs[#jobs + 1] = j
  out[#out + 1] = j.flags
end
local maxId = tonumber(redis.call('GET', KEYS[2])) or 0
local ready, delayed = false, false
for _, j in ipairs(jobs) do
  if j.flags > 0 then
    local jk = base .. j.i
    local fields = { 'name', j.n, 'data', j.d, 'opts', j.o, 'timestamp', int(j.t), 'delay', int(j.dl or 0),
      'priority', int(j.p or 0), 'atm', int(j.am or 0), 'ats', int(j.as or 0), 'stc', int(j.sc or 0) }
    local function put(name, value)
      if value ~= nil and value ~= cjson.null then fields[#fields + 1] = name; fields[#fields + 1] = value end
    end
    if j.po then put('processedOn', int(j.po)) end
    if j.fo then put('finishedOn', int(j.fo)) end
    put('returnvalue', j.rv)
    put('failedReason', j.fr)
    put('stacktrace', j.st)
    put('progress', j.pg)
    put('pb', j.pb)
    if type(j.de) == 'table' and j.flags == 1 then
      put('deid', j.de.i)
      if j.de.t > 0 then
        redis.call('SET', base .. 'de:' .. j.de.i, j.i, 'PX', int(j.de.t))
      else
        redis.call('SET', base .. 'de:' .. j.de.i, j.i)
      end
    end
    for x = 1, #fields, 200 do redis.call('HSET', jk, unpack(fields, x, math.min(x + 199, #fields))) end
    local logs = type(j.lg) == 'table' and j.lg or {}
    for x = 1, #logs, 500 do redis.call('RPUSH', jk .. ':logs', unpack(logs, x, math.min(x + 499, #logs))) end
    if j.s == 'waiting' then
      if j.fr_ == 1 then redis.call('RPUSH', readyList, j.i) else redis.call('LPUSH', readyList, j.i) end
      ready = true
    elseif j.s == 'prioritized' then
      local counter = redis.call('INCR', KEYS[6])
      redis.call('ZADD', KEYS[5], int(j.p * 4294967296 + counter % 4294967296), j.i)
      ready = true
    elseif j.s == 'delayed' then
      -- The next free order within the due ms (up to 4096 a ms, then they share the last score).
      local low = j.du * 4096
      local last = redis.call('ZREVRANGEBYSCORE', KEYS[7], int(low + 4095), int(low), 'WITHSCORES', 'LIMIT', 0, 1)
      local score = low
      if last[2] then score = math.min(tonumber(last[2]) + 1, low + 4095) end
      redis.call('ZADD', KEYS[7], int(score), j.i)
      delayed = true
    elseif j.s == 'failed' then
      redis.call('ZADD', KEYS[9], int(j.fo or j.t), j.i)
    else
      redis.call('ZADD', KEYS[8], int(j.fo or j.t), j.i)
    end
    -- A numeric id past BullMQ's counter: the counter moves past it, so no later add takes it.
    local n = string.match(j.i, '^%d+$') and tonumber(j.i)
    if n and n > maxId then maxId = n end
  end
end
if maxId > (tonumber(redis.call('GET', KEYS[2])) or 0) then redis.call('SET', KEYS[2], int(maxId)) end
if ready and not paused then redis.call('ZADD', KEYS[10], 0, '0') end
if delayed then
  local first = redis.call('ZRANGE', KEYS[7], 0, 0, 'WITHSCORES')
  if first[2] then redis.call('ZADD', KEYS[10], int(math.floor(tonumber(first[2]) / 4096)), '1') end
end
return out
`,
);

/**
 * writeScheduler: writes a job scheduler and its next occurrence, the delayed job
 * `repeat:<id>:<next>` (BullMQ's workers plan the one after it when they take it).
 * KEYS: repeat, scheduler hash, delayed, marker
 * ARGV: base, id, next (ms), scheduler fields (JSON object of strings), occurrence (JSON: n name,
 *   d data, o opts JSON, t timestamp, dl delay, p priority; '' for none)
 * Returns: 1 written, 0 a scheduler with that id is already there (nothing written).
 */
export const WRITE_SCHEDULER = bullScript(
  'writeScheduler',
  `
local base, id, nextMs = ARGV[1], ARGV[2], tonumber(ARGV[3])
local function int(n) return string.format('%.0f', n) end
if redis.call('EXISTS', KEYS[2]) == 1 or redis.call('ZSCORE', KEYS[1], id) then return 0 end
local fields = cjson.decode(ARGV[4])
local occ = ARGV[5] ~= '' and cjson.decode(ARGV[5]) or nil
local jobId = 'repeat:' .. id .. ':' .. int(nextMs)
local free = redis.call('EXISTS', base .. jobId) == 0
redis.call('ZADD', KEYS[1], int(nextMs), id)
local flat = {}
for name, value in pairs(fields) do flat[#flat + 1] = name; flat[#flat + 1] = value end
redis.call('HSET', KEYS[2], unpack(flat))
if occ and free then
  redis.call('HSET', base .. jobId, 'name', occ.n, 'data', occ.d, 'opts', occ.o, 'timestamp', int(occ.t),
    'delay', int(occ.dl), 'priority', int(occ.p or 0), 'rjk', id, 'atm', '0', 'ats', '0', 'stc', '0')
  local low = nextMs * 4096
  local last = redis.call('ZREVRANGEBYSCORE', KEYS[3], int(low + 4095), int(low), 'WITHSCORES', 'LIMIT', 0, 1)
  local score = low
  if last[2] then score = math.min(tonumber(last[2]) + 1, low + 4095) end
  redis.call('ZADD', KEYS[3], int(score), jobId)
  local first = redis.call('ZRANGE', KEYS[3], 0, 0, 'WITHSCORES')
  redis.call('ZADD', KEYS[4], int(math.floor(tonumber(first[2]) / 4096)), '1')
end
return 1
`,
);
