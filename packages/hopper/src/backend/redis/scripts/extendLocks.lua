--[[ extendLocks: renews the locks a worker holds, in one call per worker per interval; also the
  worker's heartbeat in the queue's worker registry, and the queue's epoch (dataset resets).
  KEYS: meta, active, workers, workerInfo
  Flags: allow-oom (runs when Redis is full under maxmemory: finishing jobs and renewing their locks
    must not fail while adds are refused, or running jobs would stall and run twice)
  ARGV: now, base, lockMs, workerId, workerInfo, ttlMs, ...locks
    locks: 3 values per attempt: id, token, attempt (attemptsStarted of the holder). A lock is
      renewed only for the attempt that holds it: same token AND same attempt number (a manual
      worker may reuse one token for two attempts of a job).
    workerInfo: JSON describing the worker (stored once per interval; '' to skip the registry).
  Returns: { now, epoch ('' if the queue's meta is gone), number lost, lost tokens...,
    cancelled job ids... } — lost: the tokens of the attempts that no longer hold their job
    (rescued as stalled, removed, or finished or taken by another attempt); by token, so two
    attempts of one job on one worker are told apart. cancelled: jobs it holds that were
    cancelled (the fallback when the cancel channel's message was missed). The worker aborts
    their signals. ]]
--@include base

local now = nowMs(argv.now)
local deadline = now + tonumber(argv.lockMs)
local lost, cancelled = {}, {}
-- Reads first, then writes: the held locks are renewed by ZADD calls of at most 500 jobs each.
local held = {}
for i = REST, #ARGV, 3 do
  local id, token = ARGV[i], ARGV[i + 1]
  local f = redis.call('HMGET', jobKey(argv.base, id), 'tk', 'as', 'cx')
  if f[1] == token and f[2] == ARGV[i + 2] then
    held[#held + 1] = deadline
    held[#held + 1] = id
    if f[3] then cancelled[#cancelled + 1] = id end
  else
    lost[#lost + 1] = token
  end
end
chunked('ZADD', k.active, held, 2, 'XX')
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
