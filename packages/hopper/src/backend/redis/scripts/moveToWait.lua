--[[ moveToWait: the holder of an active job puts it back at the head of the ready jobs without
  spending an attempt (a processor hit a rate limit: RateLimitError). Counted as rate-limited
  (includes/counters).
  KEYS: meta, wait, prio, prioCounter, active, events, marker
  ARGV: base, id, token, attempt
  Returns: 1 done; -1 job missing; -2 stale token or attempt; -3 not active; -5 the job was
    cancelled (a cancelled job only ends, as cancelled: includes/cancel) ]]
--@include base
--@include fence
--@include counters

local jk = jobKey(argv.base, argv.id)
local code = checkFence(jk, argv.token, argv.attempt)
if code ~= 1 then return code end
local f = redis.call('HMGET', jk, 's', 'cx', 'n')
if f[1] ~= 'active' then return -3 end
if f[2] then return -5 end
redis.call('ZREM', k.active, argv.id)
handBack(jk, argv.token)
local group = groups().leaveActive(argv.base, jk)
local state = pushReady(k, jk, argv.id, tonumber(redis.call('HGET', jk, 'p')) or 0, true, group)
signalWork(k.marker)
countOutcome('rate-limited', f[3])
flushCounts(argv.base)
emit(k.events, eventsCap(k.meta), 'waiting', 'jobId', argv.id, 'prev', 'active', 'state', state)
return 1
