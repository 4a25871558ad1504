--[[ drain: removes up to `limit` jobs that have not started: waiting and prioritized ones, and
  delayed ones too when asked. Call again until it returns 0 (bounded work per call).
  KEYS: meta, wait, prio, delayed, events
  ARGV: now, base, delayed, limit
    delayed: 1 to remove delayed jobs as well.
  Returns: the number of jobs removed by this call. ]]
--@include base
--@include remove

local base = argv.base
local now = nowMs(argv.now)
local limit = tonumber(argv.limit)
local removed = 0
local ids = redis.call('LPOP', k.wait, limit) or {}
for i = 1, #ids do
  discardJob(base, ids[i], now)
end
removed = #ids
local sets = { k.prio }
if argv.delayed == '1' then sets[2] = k.delayed end
for s = 1, #sets do
  if removed < limit then
    local popped = redis.call('ZPOPMIN', sets[s], limit - removed)
    for i = 1, #popped, 2 do
      discardJob(base, popped[i], now)
      removed = removed + 1
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
