--[[ claim: promotes due delayed jobs, then takes up to `count` ready jobs (waiting first, then
  prioritized) for one worker, locking each until now + lockMs under token tokenPrefix .. i.
  Appends to `out`: paused flag, next delayed due time (or -1), ms left of a rate limit (0 if
  none), the number of jobs, then CLAIM_FIELDS values per job. With `exact`, the single claimed
  job's token is tokenPrefix itself (manual processing with the caller's token). Used by claim, complete and fail so a worker acknowledges
  finished jobs and takes the next ones in one round trip. ]]

local PROMOTE_BATCH = 1000

-- Moves delayed jobs whose due time has come to their ready structure (bounded per call).
local function promoteDue(k, base, now, cap)
  local due = redis.call('ZRANGEBYSCORE', k.delayed, '-inf', now, 'LIMIT', 0, PROMOTE_BATCH)
  if #due == 0 then return 0 end
  for i = 1, #due do
    local id = due[i]
    local jk = jobKey(base, id)
    redis.call('ZREM', k.delayed, id)
    local priority = tonumber(redis.call('HGET', jk, 'p')) or 0
    local state = pushReady(k, jk, id, priority, false)
    emit(k.events, cap, 'waiting', 'jobId', id, 'prev', 'delayed', 'state', state)
  end
  signalWork(k.marker)
  return #due
end

local CLAIM_FIELDS = 10 -- id, name, data, opts, timestamp, attemptsMade, attemptsStarted, priority, delay, progress

local function claimJobs(k, base, now, count, lockMs, tokenPrefix, exact, cap, out)
  promoteDue(k, base, now, cap)
  if isPaused(k.meta) then
    out[#out + 1] = 1
    out[#out + 1] = -1
    out[#out + 1] = 0
    out[#out + 1] = 0
    return 0
  end
  local limited = redis.call('PTTL', k.limiter)
  if limited > 0 and count > 0 then
    out[#out + 1] = 0
    out[#out + 1] = -1
    out[#out + 1] = limited
    out[#out + 1] = 0
    return 0
  end
  local ids = {}
  if count > 0 then
    local popped = redis.call('LPOP', k.wait, count)
    if popped then ids = popped end
    if #ids < count then
      local pr = redis.call('ZPOPMIN', k.prio, count - #ids)
      for i = 1, #pr, 2 do ids[#ids + 1] = pr[i] end
    end
  end
  local nextDue = -1
  local remaining = redis.call('LLEN', k.wait) + redis.call('ZCARD', k.prio)
  if #ids < count or count == 0 then
    local first = redis.call('ZRANGE', k.delayed, 0, 0, 'WITHSCORES')
    if first[2] then nextDue = tonumber(first[2]) end
  end
  out[#out + 1] = 0
  out[#out + 1] = nextDue
  out[#out + 1] = 0
  local countAt = #out + 1
  out[countAt] = 0
  local deadline = now + lockMs
  local claimed = 0
  for i = 1, #ids do
    local id = ids[i]
    local jk = jobKey(base, id)
    local f = redis.call('HMGET', jk, 'n', 'd', 'o', 't', 'am', 'as', 'p', 'dl', 'pg', 'dc')
    if f[1] then
      claimed = claimed + 1
      local started = (tonumber(f[6]) or 0) + 1
      redis.call('ZADD', k.active, deadline, id)
      local token = tokenPrefix .. claimed
      if exact then token = tokenPrefix end
      redis.call('HSET', jk, 's', 'active', 'tk', token, 'as', started, 'po', now)
      emit(k.events, cap, 'active', 'jobId', id)
      out[#out + 1] = id
      out[#out + 1] = f[1]
      out[#out + 1] = readData(base, id, jk, f[2], f[10])
      out[#out + 1] = f[3] or ''
      out[#out + 1] = f[4] or '0'
      out[#out + 1] = f[5] or '0'
      out[#out + 1] = started
      out[#out + 1] = f[7] or '0'
      out[#out + 1] = f[8] or '0'
      out[#out + 1] = f[9] or ''
    end
  end
  out[countAt] = claimed
  if claimed > 0 then
    if remaining > 0 then
      -- Work is left: pass the wake-up on to the next idle worker.
      signalWork(k.marker)
    else
      emit(k.events, cap, 'drained')
    end
  end
  return claimed
end
