/**
 * The scripts `hopper migrate` runs on BullMQ's Redis. They are Hopper's own (BullMQ's layout is
 * read from its public docs and data, never its code). Each validates and reads before its first
 * write, touches a bounded number of jobs, and takes only jobs no BullMQ worker can still
 * complete: a job in a list or set (never one a worker holds), or an active job whose lock is gone
 * (BullMQ's own `moveToFinished` refuses a job without its lock).
 *
 * Moving a job is three steps: `take` moves it from BullMQ's structure into the migration's
 * `moving` set (its hash stays: BullMQ's workers no longer see it), Hopper writes it
 * (importJobs), then `finish` deletes it here. A crash between any two steps leaves the job in
 * `moving` (and maybe in Hopper too): a re-run finishes what `moving` holds first, and a copy found
 * in Hopper wins.
 */
import { createHash } from 'node:crypto';
import type { RedisClient } from '../backend/redis/connection.js';

/** A script and its SHA1 (sent with EVALSHA, then EVAL on NOSCRIPT). */
export interface BullScript {
  readonly name: string;
  readonly lua: string;
  readonly sha: string;
}

/** A script for BullMQ's Redis: its name, source and SHA1. */
export function bullScript(name: string, lua: string): BullScript {
  return { name, lua, sha: createHash('sha1').update(lua).digest('hex') };
}

/** Runs `s` with `keys` and `args`. */
export async function runBullScript(client: RedisClient, s: BullScript, keys: string[], args: (string | number)[]): Promise<unknown> {
  try {
    return await client.evalsha(s.sha, keys.length, ...keys, ...args);
  } catch (err) {
    if (!String((err as Error).message).startsWith('NOSCRIPT')) throw err;
    return client.eval(s.lua, keys.length, ...keys, ...args);
  }
}

/**
 * take: moves up to `count` jobs of one BullMQ structure, in the order BullMQ would run them,
 * into the migration's moving set, skipping (and reporting) those that must stay for now.
 * KEYS: source, moving, movingInfo, movingSeq, refused
 * ARGV: base (`prefix:queue:`), kind ('list' | 'zset' | 'active'), state (what the job becomes),
 *   offset (how many entries before these were skipped in this pass), count
 *   list: taken from the tail (BullMQ's next), after `offset` entries; zset: lowest scores first;
 *   active: only jobs whose lock key is gone (no worker can finish them).
 * A job whose parent is still in BullMQ and not finished is skipped: it moves once its parent has;
 * so is a job Hopper refused in this run (listed in `refused`).
 * Returns: { examined, taken ids..., '|', skipped ids... }; examined 0: nothing left to look at.
 */
export const TAKE = bullScript(
  'take',
  `
local source, moving, info, seqKey, refused = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local base, kind, state = ARGV[1], ARGV[2], ARGV[3]
local offset, count = tonumber(ARGV[4]), tonumber(ARGV[5])
local entries = {}
if kind == 'list' then
  local ids = redis.call('LRANGE', source, -(offset + count), -(offset + 1))
  for i = #ids, 1, -1 do entries[#entries + 1] = { ids[i], '' } end
elseif kind == 'zset' then
  local r = redis.call('ZRANGE', source, offset, offset + count - 1, 'WITHSCORES')
  for i = 1, #r, 2 do entries[#entries + 1] = { r[i], r[i + 1] } end
else
  local ids = redis.call('LRANGE', source, offset, offset + count - 1)
  for i = 1, #ids do entries[#entries + 1] = { ids[i], '' } end
end
-- Read phase: which entries to take.
local take, skipped = {}, {}
for _, e in ipairs(entries) do
  local id = e[1]
  local jk = base .. id
  local f = redis.call('HMGET', jk, 'parentKey', 'name')
  local keep = false
  if not f[2] then
    -- No job behind the id: a BullMQ 4 marker ('0:...') or a dangling id; dropped below.
    keep = false
  elseif redis.call('SISMEMBER', refused, id) == 1 then
    keep = true
  elseif kind == 'active' and redis.call('EXISTS', jk .. ':lock') == 1 then
    keep = true
  elseif f[1] and redis.call('EXISTS', f[1]) == 1 and not redis.call('HGET', f[1], 'finishedOn') then
    keep = true
  end
  if keep then skipped[#skipped + 1] = id else take[#take + 1] = e end
end
local out = { #entries }
for _, e in ipairs(take) do
  local id, score = e[1], e[2]
  local removed
  if kind == 'zset' then removed = redis.call('ZREM', source, id) else removed = redis.call('LREM', source, -1, id) end
  if removed == 1 and redis.call('EXISTS', base .. id) == 1 then
    local seq = redis.call('INCR', seqKey)
    redis.call('ZADD', moving, seq, id)
    redis.call('HSET', info, id, cjson.encode({ s = state, sc = score }))
    out[#out + 1] = id
  end
end
out[#out + 1] = '|'
for _, id in ipairs(skipped) do out[#out + 1] = id end
return out
`,
);

/**
 * raiseCounter: moves BullMQ's job id counter to at least `atLeast` (never back), so no later
 * BullMQ add takes an automatic id at or below it; 0 only reads it (see id-ranges.ts).
 * KEYS: id
 * ARGV: atLeast
 * Returns: the counter after the call.
 */
export const RAISE_COUNTER = bullScript(
  'raiseCounter',
  `
local current = tonumber(redis.call('GET', KEYS[1])) or 0
local atLeast = tonumber(ARGV[1])
if atLeast > current then
  redis.call('SET', KEYS[1], string.format('%d', atLeast))
  return atLeast
end
return current
`,
);

/**
 * takeOne: moves one named job (a scheduler's planned occurrence) from the delayed set into the
 * moving set, if it is there.
 * KEYS: delayed, moving, movingInfo, movingSeq
 * ARGV: id, info JSON
 * Returns: 1 taken, 0 not in the delayed set.
 */
export const TAKE_ONE = bullScript(
  'takeOne',
  `
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not score then return 0 end
redis.call('ZREM', KEYS[1], ARGV[1])
local seq = redis.call('INCR', KEYS[4])
redis.call('ZADD', KEYS[2], seq, ARGV[1])
redis.call('HSET', KEYS[3], ARGV[1], ARGV[2])
return 1
`,
);

/**
 * finish: deletes moved jobs from BullMQ once Hopper holds them: the hash, logs, lock, its entry
 * in its parent's pending set; as a parent with children still pending here, it keeps its
 * dependency keys (listed in movedParents) so that those children's outcomes can be carried over
 * to Hopper. Its deduplication key stays, still naming the moved job: one with a ttl until it
 * expires (as in BullMQ); one without (held until the job finishes) is leased: given a ttl of
 * `leaseMs` and listed in `dedupLeases`, renewed by the migration while the job holds its id in
 * Hopper and deleted once it no longer does (bullmq-dedup.ts). BullMQ's add takes a key without
 * ttl whose job hash is gone for a stale one, so a lease is what keeps deduplicating BullMQ adds
 * onto the moved job; if the migration stops, the lease expires by itself.
 * KEYS: moving, movingInfo, movedParents, dedupLeases
 * ARGV: base, prefix, leaseMs, ...ids
 * Returns: the number of jobs finished (an id no longer in moving is skipped).
 */
export const FINISH = bullScript(
  'finish',
  `
local moving, info, parents, leases = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local base, prefix, leaseMs = ARGV[1], ARGV[2], ARGV[3]
local todo = {}
for i = 4, #ARGV do
  local id = ARGV[i]
  if redis.call('ZSCORE', moving, id) then
    local jk = base .. id
    local f = redis.call('HMGET', jk, 'parentKey', 'deid')
    -- Its deduplication key is leased when it names this job and has no ttl (PTTL -1).
    local lease = false
    if f[2] and redis.call('GET', base .. 'de:' .. f[2]) == id then lease = redis.call('PTTL', base .. 'de:' .. f[2]) == -1 end
    todo[#todo + 1] = { id = id, jk = jk, parentKey = f[1], deid = f[2], lease = lease,
      pending = redis.call('SCARD', jk .. ':dependencies') }
  end
end
for _, t in ipairs(todo) do
  if t.parentKey then redis.call('SREM', t.parentKey .. ':dependencies', t.jk) end
  if t.lease then
    redis.call('PEXPIRE', base .. 'de:' .. t.deid, leaseMs)
    redis.call('HSET', leases, t.deid, t.id)
  end
  redis.call('DEL', t.jk, t.jk .. ':logs', t.jk .. ':lock')
  if t.pending > 0 then
    redis.call('SADD', parents, t.id)
  else
    redis.call('DEL', t.jk .. ':dependencies', t.jk .. ':processed', t.jk .. ':failed', t.jk .. ':unsuccessful')
  end
  redis.call('ZREM', moving, t.id)
  redis.call('HDEL', info, t.id)
end
return #todo
`,
);

/**
 * giveBack: puts taken jobs back where they were when Hopper refused them (their options), so
 * nothing is stranded in the moving set, and lists them in `refused` so this run leaves them.
 * KEYS: moving, movingInfo, refused
 * ARGV: triplets id, structure key, score ('' for the waiting list: back at its tail, next to run)
 * Returns: the number given back.
 */
export const GIVE_BACK = bullScript(
  'giveBack',
  `
local n = 0
for i = 1, #ARGV, 3 do
  local id, key, score = ARGV[i], ARGV[i + 1], ARGV[i + 2]
  if redis.call('ZREM', KEYS[1], id) == 1 then
    redis.call('HDEL', KEYS[2], id)
    redis.call('SADD', KEYS[3], id)
    if score == '' then redis.call('RPUSH', key, id) else redis.call('ZADD', key, score, id) end
    n = n + 1
  end
end
return n
`,
);

/**
 * settleParent: forgets the children's outcomes a moved parent's kept dependency keys recorded,
 * once Hopper has them; deletes the keys when nothing is pending any more.
 * KEYS: movedParents
 * ARGV: parent job key, parent id, count of completed keys, ...completed keys, count of failed keys, ...failed, ...unsuccessful
 * Returns: 1 when the parent's keys are gone (nothing pending), else 0.
 */
export const SETTLE_PARENT = bullScript(
  'settleParent',
  `
local jk, id = ARGV[1], ARGV[2]
local i = 3
local nc = tonumber(ARGV[i]); i = i + 1
for j = 1, nc do redis.call('HDEL', jk .. ':processed', ARGV[i]); i = i + 1 end
local nf = tonumber(ARGV[i]); i = i + 1
for j = 1, nf do redis.call('HDEL', jk .. ':failed', ARGV[i]); i = i + 1 end
while i <= #ARGV do redis.call('ZREM', jk .. ':unsuccessful', ARGV[i]); i = i + 1 end
if redis.call('SCARD', jk .. ':dependencies') == 0 and redis.call('HLEN', jk .. ':processed') == 0
  and redis.call('HLEN', jk .. ':failed') == 0 and redis.call('ZCARD', jk .. ':unsuccessful') == 0 then
  redis.call('DEL', jk .. ':dependencies', jk .. ':processed', jk .. ':failed', jk .. ':unsuccessful')
  redis.call('SREM', KEYS[1], id)
  return 1
end
return 0
`,
);

/**
 * finishScheduler: deletes a job scheduler (or legacy repeatable) from BullMQ once Hopper has it.
 * KEYS: repeat, scheduler hash
 * ARGV: id
 * Returns: 1 deleted, 0 already gone.
 */
export const FINISH_SCHEDULER = bullScript(
  'finishScheduler',
  `
local removed = redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('DEL', KEYS[2])
return removed
`,
);

/**
 * lock: takes, renews or releases the migration lock of a queue.
 * KEYS: lock
 * ARGV: op ('take' | 'renew' | 'release'), token, ttl ms
 * Returns: 1 done; 0 refused (held by another token, or lost); take also returns the holder's ms left as { 0, pttl }.
 */
export const LOCK = bullScript(
  'lock',
  `
local op, token, ttl = ARGV[1], ARGV[2], ARGV[3]
local holder = redis.call('GET', KEYS[1])
if op == 'take' then
  if holder and holder ~= token then return { 0, redis.call('PTTL', KEYS[1]) } end
  redis.call('SET', KEYS[1], token, 'PX', ttl)
  return { 1, 0 }
end
if holder ~= token then return { 0, 0 } end
if op == 'renew' then redis.call('PEXPIRE', KEYS[1], ttl) else redis.call('DEL', KEYS[1]) end
return { 1, 0 }
`,
);

/**
 * readJobs: everything about a batch of taken jobs, in one atomic read: the hash, the newest
 * `maxLogs` log lines and the log's length, the dependency records (pending, completed,
 * failed, unsuccessful), and the deduplication key's holder and ms left.
 * KEYS: movingInfo
 * ARGV: base, maxLogs, ...ids
 * Returns: per id { info JSON or false, hash (flat), logs, logCount, deps, processed (flat), failed (flat), unsuccessful, dedupHolder, dedupPttl }
 */
export const READ_JOBS = bullScript(
  'readJobs',
  `
local base, maxLogs = ARGV[1], tonumber(ARGV[2])
local out = {}
for i = 3, #ARGV do
  local id = ARGV[i]
  local jk = base .. id
  local hash = redis.call('HGETALL', jk)
  local deid = redis.call('HGET', jk, 'deid')
  local holder, pttl = false, -2
  if deid then
    holder = redis.call('GET', base .. 'de:' .. deid)
    pttl = redis.call('PTTL', base .. 'de:' .. deid)
  end
  out[#out + 1] = {
    redis.call('HGET', KEYS[1], id) or false,
    hash,
    redis.call('LRANGE', jk .. ':logs', -maxLogs, -1),
    redis.call('LLEN', jk .. ':logs'),
    redis.call('SMEMBERS', jk .. ':dependencies'),
    redis.call('HGETALL', jk .. ':processed'),
    redis.call('HGETALL', jk .. ':failed'),
    redis.call('ZRANGE', jk .. ':unsuccessful', 0, -1),
    holder,
    pttl,
  }
end
return out
`,
);

/**
 * readDedupKeys: one page of a SCAN over the queue's deduplication keys (`<base>de:*`): each
 * string key with a ttl, the job id it names and its ms left. Keys the migration leases (listed in
 * `dedupLeases` with the job they name) are left out: their ttl is the lease's, not BullMQ's.
 * KEYS: meta, dedupLeases (meta routes the call to the queue's Cluster slot)
 * ARGV: pattern (glob-escaped base .. 'de:*'), cursor, count, skip (length of base .. 'de:')
 * Returns: { next cursor ('0': done), id, job id, pttl, ... }
 */
export const READ_DEDUP_KEYS = bullScript(
  'readDedupKeys',
  `
local reply = redis.call('SCAN', ARGV[2], 'MATCH', ARGV[1], 'COUNT', tonumber(ARGV[3]))
local skip = tonumber(ARGV[4])
local out = { reply[1] }
for _, key in ipairs(reply[2]) do
  if redis.call('TYPE', key).ok == 'string' then
    local pttl = redis.call('PTTL', key)
    local jobId = redis.call('GET', key)
    local id = string.sub(key, skip + 1)
    if pttl > 0 and jobId and redis.call('HGET', KEYS[2], id) ~= jobId then
      out[#out + 1] = id
      out[#out + 1] = jobId
      out[#out + 1] = pttl
    end
  end
end
return out
`,
);

/**
 * keepLeases: renews or ends the leases of moved jobs' deduplication keys (see finish). An entry
 * whose job still holds its id in Hopper keeps its key naming the job (its ttl renewed when less
 * than half the lease is left; written again if it expired meanwhile); one whose job no longer
 * does (it finished or was removed in Hopper), or whose key now names another job (a BullMQ add
 * took the id once the lease expired), is forgotten, and its key deleted if it still names the job.
 * KEYS: dedupLeases
 * ARGV: base, leaseMs, then triplets: deduplication id, job id, alive ('1': Hopper's key names the job)
 * Returns: { renewed, ended }
 */
export const KEEP_LEASES = bullScript(
  'keepLeases',
  `
local base, leaseMs = ARGV[1], tonumber(ARGV[2])
local plan = {}
for i = 3, #ARGV, 3 do
  local id, jobId, alive = ARGV[i], ARGV[i + 1], ARGV[i + 2] == '1'
  if redis.call('HGET', KEYS[1], id) == jobId then
    local dk = base .. 'de:' .. id
    local holder = redis.call('GET', dk)
    local action = 'end'
    if alive and not holder then
      action = 'write'
    elseif alive and holder == jobId then
      local pttl = redis.call('PTTL', dk)
      if pttl >= 0 and pttl < leaseMs / 2 then action = 'renew' else action = 'keep' end
    end
    plan[#plan + 1] = { id = id, dk = dk, action = action, owned = holder == jobId, jobId = jobId }
  end
end
local renewed, ended = 0, 0
for _, p in ipairs(plan) do
  if p.action == 'write' then
    redis.call('SET', p.dk, p.jobId, 'PX', leaseMs)
    renewed = renewed + 1
  elseif p.action == 'renew' then
    redis.call('PEXPIRE', p.dk, leaseMs)
    renewed = renewed + 1
  elseif p.action == 'end' then
    if p.owned then redis.call('DEL', p.dk) end
    redis.call('HDEL', KEYS[1], p.id)
    ended = ended + 1
  end
end
return { renewed, ended }
`,
);

/**
 * readJobDedupKeys: the deduplication keys with a ttl of named jobs (ones BullMQ workers took, from
 * its events): for each job whose hash names a deduplication id (`deid`) whose key still names it,
 * has a ttl and is not leased, the id, job id and ms left.
 * KEYS: dedupLeases
 * ARGV: base, ...job ids
 * Returns: { id, job id, pttl, ... }
 */
export const READ_JOB_DEDUP_KEYS = bullScript(
  'readJobDedupKeys',
  `
local base = ARGV[1]
local out = {}
for i = 2, #ARGV do
  local jobId = ARGV[i]
  local id = redis.call('TYPE', base .. jobId).ok == 'hash' and redis.call('HGET', base .. jobId, 'deid')
  if id then
    local dk = base .. 'de:' .. id
    if redis.call('TYPE', dk).ok == 'string' and redis.call('GET', dk) == jobId and redis.call('HGET', KEYS[1], id) ~= jobId then
      local pttl = redis.call('PTTL', dk)
      if pttl > 0 then
        out[#out + 1] = id
        out[#out + 1] = jobId
        out[#out + 1] = pttl
      end
    end
  end
end
return out
`,
);
