--[[ clean: removes up to `limit` jobs in `state` that are older than the grace period: finished
  before now - graceMs (completed, failed) or created before it (waiting, prioritized, delayed).
  Walks the structure from its oldest end in bounded steps; call again with the cursor. Waiting
  and prioritized jobs of groups are walked after the others, group by group in name order, at
  most GROUPS_PER_CALL groups per call (so a call is bounded however many groups there are, and
  the whole walk linear). A job scheduler's pending run is kept (includes/pending). A parent in
  this queue released by the removal of its last pending child is removed too when it lands in
  the state cleaned and is old enough, and so on up (includes/tree): cleaning waiting jobs does
  not leave a parent to run without them. (Cleaning finished children releases their parent.)
  KEYS: meta, wait, prio, delayed, completed, failed, events
  Flags: allow-oom (it frees memory: it must run when Redis is full under maxmemory)
  ARGV: now, base, state, graceMs, limit, cursor
    cursor: '' to start; else as returned: 'N' (jobs kept so far in the state's own structure) or
      'gN:group' (resume at that group, past the N jobs of it kept).
  Returns: { done (0/1), next cursor, visited groups, removed ids... } ]]
--@include base
--@include tree

local GROUPS_PER_CALL = 100
local now = nowMs(argv.now)
local base = argv.base
local state = argv.state
local cutoff = now - tonumber(argv.graceMs)
local limit = tonumber(argv.limit)
local cursor = argv.cursor
local removed = {}
local key, kind = structureOf(k, state)

local function isOld(id)
  -- A scheduler's pending run is never cleaned: the scheduler keeps firing.
  if pendingRunOf(base, id) then return false end
  return (tonumber(redis.call('HGET', jobKey(base, id), 't')) or 0) <= cutoff
end

local function discard(id)
  discardJob(base, id, now)
  removed[#removed + 1] = id
end

local function takes(id, released)
  return released == state and isOld(id)
end

-- The one place a job is dropped (already taken out of its structure).
local function dropJob(id)
  dropReleasing(k, base, id, discard, takes)
end

local function finish(done, nextCursor, visited)
  if #removed > 0 then emit(k.events, eventsCap(k.meta), 'cleaned', 'count', #removed, 'state', state) end
  local out = { done, nextCursor, visited }
  for i = 1, #removed do out[#out + 1] = removed[i] end
  return out
end

if state == 'completed' or state == 'failed' then
  -- Scored by finish time: the old ones are a prefix of the set.
  local ids = redis.call('ZRANGEBYSCORE', key, '-inf', cutoff, 'LIMIT', 0, limit)
  for i = 1, #ids do
    redis.call('ZREM', key, ids[i])
    dropJob(ids[i])
  end
  if #ids == limit then return finish(0, '', 0) end
  return finish(1, '', 0)
end

-- Not ordered by creation: check each job's timestamp, a window at a time.
local walked = 0
local grouped = (state == 'waiting' or state == 'prioritized') and redis.call('HEXISTS', k.meta, 'gm') == 1
if string.sub(cursor, 1, 1) ~= 'g' then
  local offset = tonumber(cursor) or 0
  local kept = 0
  local window
  if kind == 'list' then
    window = redis.call('LRANGE', key, offset, offset + limit - 1)
  else
    window = redis.call('ZRANGE', key, offset, offset + limit - 1)
  end
  local removedHere = 0
  for i = 1, #window do
    local id = window[i]
    if isOld(id) then
      if kind == 'list' then
        redis.call('LSET', key, offset + i - 1, '\0deleted')
      else
        redis.call('ZREM', key, id)
      end
      dropJob(id)
      removedHere = removedHere + 1
    else
      kept = kept + 1
    end
  end
  if kind == 'list' and removedHere > 0 then redis.call('LREM', key, removedHere, '\0deleted') end
  walked = #window
  if walked == limit then return finish(0, tostring(offset + kept), 0) end
  if not grouped then return finish(1, '', 0) end
  cursor = 'g0:'
end
if not grouped then return finish(1, '', 0) end

-- Then the grouped ready jobs in this state (scores below PRIO_SHIFT: waiting), group by group
-- from the cursor. One group more than visited is read, to know where the next call starts.
local min, max = '-inf', '(' .. PRIO_SHIFT
if state == 'prioritized' then min, max = PRIO_SHIFT, '+inf' end
local sep = string.find(cursor, ':', 1, true)
local skip = tonumber(string.sub(cursor, 2, sep - 1))
local at = string.sub(cursor, sep + 1)
local start = '-'
if at ~= '' then start = '[' .. at end
local known = redis.call('ZRANGEBYLEX', base .. 'gs', start, '+', 'LIMIT', 0, GROUPS_PER_CALL + 1)
local visited = 0
for g = 1, math.min(#known, GROUPS_PER_CALL) do
  visited = visited + 1
  local gq = groups().groupQueueKey(base, known[g])
  local window = redis.call('ZRANGEBYSCORE', gq, min, max, 'LIMIT', skip, limit - walked)
  local kept = 0
  for i = 1, #window do
    local id = window[i]
    if isOld(id) then
      redis.call('ZREM', gq, id)
      dropJob(id)
    else
      kept = kept + 1
    end
  end
  walked = walked + #window
  -- The batch is full: this group may hold more, so the next call starts at it, past the kept ones.
  if walked >= limit then return finish(0, 'g' .. (skip + kept) .. ':' .. known[g], visited) end
  skip = 0
end
if #known > GROUPS_PER_CALL then return finish(0, 'g0:' .. known[GROUPS_PER_CALL + 1], visited) end
return finish(1, '', visited)
