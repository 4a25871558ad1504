--[[ drain: removes up to `limit` jobs that have not started: waiting and prioritized ones, and
  delayed ones too when asked, except job schedulers' pending runs (includes/pending: the
  schedulers keep firing). Call again until it returns 0 (bounded work per call: `limit` jobs
  removed, plus the pending runs walked past, at most one per scheduler).
  KEYS: meta, wait, prio, delayed, events
  ARGV: now, base, delayed, limit
    delayed: 1 to remove delayed jobs as well.
  Returns: the number of jobs removed by this call. ]]
--@include base
--@include remove
--@include pending

local base = argv.base
local now = nowMs(argv.now)
local limit = tonumber(argv.limit)
local removed = 0
local ids = redis.call('LPOP', k.wait, limit) or {}
for i = 1, #ids do
  discardJob(base, ids[i], now)
end
removed = #ids
if removed < limit then
  local popped = redis.call('ZPOPMIN', k.prio, limit - removed)
  for i = 1, #popped, 2 do
    discardJob(base, popped[i], now)
    removed = removed + 1
  end
end
if argv.delayed == '1' then
  -- Earliest first; a scheduler's pending run stays where it is (at the front of what is left),
  -- so each window starts past the ones kept so far.
  local kept = 0
  while removed < limit do
    local window = redis.call('ZRANGE', k.delayed, kept, kept + limit - removed - 1)
    if #window == 0 then break end
    for i = 1, #window do
      local id = window[i]
      if pendingRunOf(base, id) then
        kept = kept + 1
      else
        redis.call('ZREM', k.delayed, id)
        discardJob(base, id, now)
        removed = removed + 1
      end
    end
  end
end
-- Grouped ready jobs: group by group (their groups stay in the ring, idle when next claimed).
if removed < limit and redis.call('HEXISTS', k.meta, 'gm') == 1 then
  local known = redis.call('ZRANGE', base .. 'gs', 0, -1)
  for g = 1, #known do
    if removed >= limit then break end
    local popped = redis.call('ZPOPMIN', groups().groupQueueKey(base, known[g]), limit - removed)
    for i = 1, #popped, 2 do
      discardJob(base, popped[i], now)
      removed = removed + 1
    end
  end
end
if removed > 0 then emit(k.events, eventsCap(k.meta), 'drained-queue', 'count', removed) end
return removed
