--[[ moveToWait: the holder of an active job puts it back at the head of the ready jobs without
  spending an attempt (a processor hit a rate limit: RateLimitError).
  KEYS: meta, wait, prio, prioCounter, active, events, marker
  ARGV: base, id, token, attempt
  Returns: 1 done; -1 job missing; -2 stale token or attempt; -3 not active ]]
--@include base
--@include fence

local jk = jobKey(argv.base, argv.id)
local code = checkFence(jk, argv.token, argv.attempt)
if code ~= 1 then return code end
if redis.call('HGET', jk, 's') ~= 'active' then return -3 end
redis.call('ZREM', k.active, argv.id)
redis.call('HDEL', jk, 'tk')
local f = redis.call('HMGET', jk, 'p', 'g')
if f[2] then releaseGroup(argv.base, f[2], 1) end
local state = pushReady(k, jk, argv.id, tonumber(f[1]) or 0, true, f[2])
signalWork(k.marker)
emit(k.events, eventsCap(k.meta), 'waiting', 'jobId', argv.id, 'prev', 'active', 'state', state)
return 1
