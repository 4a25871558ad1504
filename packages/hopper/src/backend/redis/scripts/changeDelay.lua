--[[ changeDelay: reschedules a delayed job to now + delay.
  KEYS: meta, delayed, events, marker
  ARGV: now, base, id, delay
  Returns: 1 done; -1 job missing; -3 the job is not delayed ]]
--@include base

local now = nowMs(argv.now)
local jk = jobKey(argv.base, argv.id)
local state = redis.call('HGET', jk, 's')
if not state then return -1 end
if state ~= 'delayed' then return -3 end
local delay = tonumber(argv.delay)
redis.call('HSET', jk, 'dl', delay)
pushDelayed(k, jk, argv.id, now + delay)
emit(k.events, eventsCap(k.meta), 'delayed', 'jobId', argv.id, 'delay', now + delay)
return 1
