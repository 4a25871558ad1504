--[[ promoteJobs: makes delayed jobs ready now: up to `count` of them (earliest first), or
  exactly the given ids. Call again until it returns 0.
  KEYS: meta, wait, prio, prioCounter, delayed, events, marker
  ARGV: base, count, ...ids
  Returns: the number promoted (with ids: 1 per promoted id, 0 for an id that is not delayed). ]]
--@include base
--@include scheduler

local base = argv.base
local ids = {}
local explicit = #ARGV >= REST
if explicit then
  for i = REST, #ARGV do ids[#ids + 1] = ARGV[i] end
else
  ids = redis.call('ZRANGE', k.delayed, 0, tonumber(argv.count) - 1)
end
local cap = eventsCap(k.meta)
local moved = 0
local out = {}
for i = 1, #ids do
  local id = ids[i]
  local jk = jobKey(base, id)
  local due = redis.call('ZSCORE', k.delayed, id)
  if due and redis.call('ZREM', k.delayed, id) == 1 then
    redis.call('HSET', jk, 'dl', 0)
    local f = redis.call('HMGET', jk, 'p', 'sk', 'as')
    if f[2] and not f[3] then
      -- An occurrence that never started (a retry of one is an ordinary job).
      fireOccurrence(k, base, id, jk, f[2], tonumber(f[1]) or 0, tonumber(due), nowMs(''), cap)
    else
      local state = pushReady(k, jk, id, tonumber(f[1]) or 0, false)
      emit(k.events, cap, 'waiting', 'jobId', id, 'prev', 'delayed', 'state', state)
    end
    moved = moved + 1
    out[#out + 1] = 1
  else
    out[#out + 1] = 0
  end
end
if moved > 0 then signalWork(k.marker) end
if explicit then return out end
return moved
