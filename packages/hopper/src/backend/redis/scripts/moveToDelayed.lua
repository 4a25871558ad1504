--[[ moveToDelayed: the holder of an active job puts it back as delayed until `timestamp`,
  without spending an attempt (BullMQ's moveToDelayed + DelayedError pattern).
  KEYS: meta, delayed, active, events, marker
  ARGV: now, base, id, token, attempt, timestamp
  Returns: 1 done; -1 job missing; -2 stale token or attempt; -3 not active; -5 the job was
    cancelled (a cancelled job only ends, as cancelled: includes/cancel) ]]
--@include base
--@include fence

local now = nowMs(argv.now)
local jk = jobKey(argv.base, argv.id)
local code = checkFence(jk, argv.token, argv.attempt)
if code ~= 1 then return code end
local f = redis.call('HMGET', jk, 's', 'cx')
if f[1] ~= 'active' then return -3 end
if f[2] then return -5 end
redis.call('ZREM', k.active, argv.id)
handBack(jk, argv.token)
groups().leaveActive(argv.base, jk)
local due = math.max(tonumber(argv.timestamp), now)
redis.call('HSET', jk, 'dl', due - now)
pushDelayed(k, jk, argv.id, due)
emit(k.events, eventsCap(k.meta), 'delayed', 'jobId', argv.id, 'delay', due, 'prev', 'active')
return 1
