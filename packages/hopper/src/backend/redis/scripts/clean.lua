--[[ clean: removes up to `limit` jobs in `state` that are older than the grace period: finished
  before now - graceMs (completed, failed) or created before it (waiting, prioritized, delayed).
  Walks the structure from its oldest end in bounded steps; call again with the cursor. Waiting
  and prioritized jobs of groups are walked after the others, group by group (the cursor is a
  rank in that sequence, as in getRange). A job scheduler's pending run is kept (includes/pending).
  KEYS: meta, wait, prio, delayed, completed, failed, events
  ARGV: now, base, state, graceMs, limit, cursor
  Returns: { nextCursor (-1 when done), removed ids... } ]]
--@include base
--@include remove
--@include pending

local now = nowMs(argv.now)
local base = argv.base
local state = argv.state
local cutoff = now - tonumber(argv.graceMs)
local limit = tonumber(argv.limit)
local cursor = tonumber(argv.cursor)
local out = { -1 }
local key, kind = structureOf(k, state)

if state == 'completed' or state == 'failed' then
  -- Scored by finish time: the old ones are a prefix of the set.
  local ids = redis.call('ZRANGEBYSCORE', key, '-inf', cutoff, 'LIMIT', 0, limit)
  for i = 1, #ids do
    redis.call('ZREM', key, ids[i])
    discardJob(base, ids[i], now)
    out[#out + 1] = ids[i]
  end
  if #ids == limit then out[1] = 0 end
else
  -- Not ordered by creation: check each job's timestamp, a window at a time.
  local walked, kept = 0, 0
  -- (A scheduler's pending run is never cleaned: the scheduler keeps firing.)
  local function isOld(id)
    if state == 'delayed' and pendingRunOf(base, id) then return false end
    return (tonumber(redis.call('HGET', jobKey(base, id), 't')) or 0) <= cutoff
  end
  local size
  if kind == 'list' then size = redis.call('LLEN', key) else size = redis.call('ZCARD', key) end
  if cursor < size then
    local window
    if kind == 'list' then
      window = redis.call('LRANGE', key, cursor, cursor + limit - 1)
    else
      window = redis.call('ZRANGE', key, cursor, cursor + limit - 1)
    end
    local removedHere = false
    for i = 1, #window do
      local id = window[i]
      if isOld(id) then
        if kind == 'list' then
          redis.call('LSET', key, cursor + i - 1, '\0deleted')
        else
          redis.call('ZREM', key, id)
        end
        discardJob(base, id, now)
        out[#out + 1] = id
        removedHere = true
      else
        kept = kept + 1
      end
    end
    if kind == 'list' and removedHere then redis.call('LREM', key, 0, '\0deleted') end
    walked = #window
  end
  -- Then the grouped ready jobs in this state (scores below PRIO_SHIFT: waiting), group by group.
  if walked < limit and (state == 'waiting' or state == 'prioritized') and redis.call('HEXISTS', k.meta, 'gm') == 1 then
    local min, max = '-inf', '(' .. PRIO_SHIFT
    if state == 'prioritized' then min, max = PRIO_SHIFT, '+inf' end
    local skip = math.max(cursor - size, 0)
    local known = redis.call('ZRANGE', base .. 'gs', 0, -1)
    for g = 1, #known do
      if walked >= limit then break end
      local gq = groups().groupQueueKey(base, known[g])
      local n = redis.call('ZCOUNT', gq, min, max)
      if skip >= n then
        skip = skip - n
      else
        local window = redis.call('ZRANGEBYSCORE', gq, min, max, 'LIMIT', skip, limit - walked)
        skip = 0
        for i = 1, #window do
          local id = window[i]
          if isOld(id) then
            redis.call('ZREM', gq, id)
            discardJob(base, id, now)
            out[#out + 1] = id
          else
            kept = kept + 1
          end
        end
        walked = walked + #window
      end
    end
  end
  if walked == limit then out[1] = cursor + kept end
end
if #out > 1 then emit(k.events, eventsCap(k.meta), 'cleaned', 'count', #out - 1, 'state', state) end
return out
