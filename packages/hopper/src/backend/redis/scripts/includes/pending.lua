--[[ pending: a job scheduler's pending run. The scheduler keeps one occurrence waiting for its
  next instant (scheduler field `pid`); when it falls due the scheduler plans the next one, so
  that job is what keeps the scheduler going. It is pending while it is delayed and has never
  started: once fired it is an ordinary job, and a retry of it (delayed for its backoff, `as`
  set) is too. Operations that would discard the pending run refuse (remove, cancel: code -5)
  or skip it (drain, clean). ]]

-- Whether occurrence `id` is still waiting for its first run (delayed, never started).
local function isWaitingOccurrence(base, id)
  if not id or id == '' then return false end
  local f = redis.call('HMGET', jobKey(base, id), 's', 'as')
  return f[1] == 'delayed' and not f[2]
end

-- The id of the scheduler whose pending run job `id` is, or false.
local function pendingRunOf(base, id)
  local f = redis.call('HMGET', jobKey(base, id), 'sk', 's', 'as')
  if not f[1] or f[2] ~= 'delayed' or f[3] then return false end
  if redis.call('HGET', base .. 's:' .. f[1], 'pid') ~= id then return false end
  return f[1]
end
