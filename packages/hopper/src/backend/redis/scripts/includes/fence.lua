--[[ fence: checks that a write comes from the attempt that holds the job (DESIGN, promise 3).
  An empty token means an unfenced call (a job fetched with getJob, as in BullMQ).
  A holder that moved its job itself (moveToDelayed, moveToWait, moveToWaitingChildren: `mt`
  keeps its token) still writes as that attempt until the job is claimed again (a new attempt
  number): BullMQ's step-job pattern, `moveToDelayed` then `updateData` then `DelayedError`.
  Returns 1 when the write may go on, -1 when the job is missing, -2 when the caller's
  (token, attempt) is not the holder's. ]]

local function checkFence(jk, token, attempt)
  local f = redis.call('HMGET', jk, 's', 'tk', 'as', 'mt')
  if not f[1] then return -1 end
  if token == '' then return 1 end
  if f[3] ~= attempt then return -2 end
  if f[2] == token or (not f[2] and f[4] == token) then return 1 end
  return -2
end

-- The holder of `jk` moves it out of active itself: it no longer holds a lock, but its running
-- processor keeps writing as this attempt (see checkFence).
local function handBack(jk, token)
  redis.call('HDEL', jk, 'tk')
  redis.call('HSET', jk, 'mt', token)
end
