--[[ extendLocks: renews the locks a worker holds, in one call per worker per interval; also the
  worker's heartbeat in the queue's worker registry, and the queue's epoch (dataset resets).
  KEYS: meta, active, workers, workerInfo
  ARGV: now, base, lockMs, workerId, workerInfo, ttlMs, ...locks
    locks: 2 values per job: id, token
    workerInfo: JSON describing the worker (stored once per interval; '' to skip the registry).
  Returns: { now, epoch ('' if the queue's meta is gone), number lost, lost job ids...,
    cancelled job ids... } — lost: jobs whose lock the caller no longer holds (rescued as stalled,
    removed, or finished by another attempt); cancelled: jobs it holds that were cancelled (the
    fallback when the cancel channel's message was missed). The worker aborts their signals. ]]
--@include base

local now = nowMs(argv.now)
local deadline = now + tonumber(argv.lockMs)
local lost, cancelled = {}, {}
for i = REST, #ARGV, 2 do
  local id, token = ARGV[i], ARGV[i + 1]
  local f = redis.call('HMGET', jobKey(argv.base, id), 'tk', 'cx')
  if f[1] == token then
    redis.call('ZADD', k.active, 'XX', deadline, id)
    if f[2] then cancelled[#cancelled + 1] = id end
  else
    lost[#lost + 1] = id
  end
end
local out = { now, redis.call('HGET', k.meta, 'epoch') or '', #lost }
for i = 1, #lost do out[#out + 1] = lost[i] end
for i = 1, #cancelled do out[#out + 1] = cancelled[i] end
if argv.workerInfo ~= '' then
  redis.call('ZADD', k.workers, now + tonumber(argv.ttlMs), argv.workerId)
  redis.call('HSET', k.workerInfo, argv.workerId, argv.workerInfo)
  -- Forget workers that stopped beating (crashed without unregistering).
  local gone = redis.call('ZRANGEBYSCORE', k.workers, '-inf', now, 'LIMIT', 0, 100)
  for i = 1, #gone do
    redis.call('ZREM', k.workers, gone[i])
    redis.call('HDEL', k.workerInfo, gone[i])
  end
end
return out
