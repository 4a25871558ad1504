--[[ moveToWaitingChildren: the holder of an active job that added children moves it to
  waiting-children while any of them is pending (no attempt spent); it moves on when they are
  done (includes/flow). Nothing moves when no child is pending.
  KEYS: meta, active, waitingChildren, events
  ARGV: now, base, id, token, attempt
  Returns: { code, reason }: 1 moved; 0 nothing pending (or a continueParentOnFailure child
    failed): keep processing; -4 a child with failParentOnFailure failed (reason: why); -1 job
    missing; -2 stale token or attempt; -3 not active; -5 the job was cancelled (a cancelled job
    only ends, as cancelled: includes/cancel) ]]
--@include base
--@include fence

local now = nowMs(argv.now)
local id = argv.id
local jk = jobKey(argv.base, id)
local code = checkFence(jk, argv.token, argv.attempt)
if code ~= 1 then return { code, '' } end
local f = redis.call('HMGET', jk, 's', 'ff', 'cf', 'cx')
if f[1] ~= 'active' then return { -3, '' } end
if f[4] then return { -5, '' } end
if f[2] then return { -4, f[2] } end
if f[3] then
  redis.call('HDEL', jk, 'cf')
  return { 0, '' }
end
if redis.call('SCARD', argv.base .. 'dp:' .. id) == 0 then return { 0, '' } end
redis.call('ZREM', k.active, id)
-- No holder while it waits; a parent's own delay applies once, after its first children.
redis.call('HDEL', jk, 'dl')
handBack(jk, argv.token)
groups().leaveActive(argv.base, jk)
redis.call('HSET', jk, 's', 'waiting-children')
redis.call('ZADD', k.waitingChildren, now, id)
emit(k.events, eventsCap(k.meta), 'waiting-children', 'jobId', id, 'prev', 'active')
return { 1, '' }
