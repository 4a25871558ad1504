--[[ claim: promotes due delayed jobs, then takes up to `count` ready jobs (waiting first, then
  prioritized) for one worker, locking each until now + lockMs under token tokenPrefix .. i.
  Appends to `out`: paused flag, next delayed due time (or -1), ms left of a rate limit (0 if
  none), whether a scheduler needs advancing (0/1), the number of jobs, then one row per job: { name, data, opts, timestamp, attemptsMade,
  attemptsStarted, priority, delay, progress, id } (absent values are nil). With `exact`, the single claimed
  job's token is tokenPrefix itself (manual processing with the caller's token). Used by claim, complete and fail so a worker acknowledges
  finished jobs and takes the next ones in one round trip. ]]

local PROMOTE_BATCH = 1000

-- Moves delayed jobs whose due time has come to their ready structure (bounded per call).
-- Returns how many jobs were promoted, and whether a scheduler's occurrence fell due (its
-- scheduler then needs its next occurrence, which TypeScript computes).
local function promoteDue(k, base, now, cap)
  local due = redis.call('ZRANGEBYSCORE', k.delayed, '-inf', now, 'LIMIT', 0, PROMOTE_BATCH)
  if #due == 0 then return 0, false end
  local fired = false
  redis.call('ZREM', k.delayed, unpack(due))
  for i = 1, #due do
    local id = due[i]
    local jk = jobKey(base, id)
    local f = redis.call('HMGET', jk, 'p', 'sk')
    local priority = tonumber(f[1]) or 0
    if f[2] then
      -- A scheduler's occurrence: its scheduler's policies decide (includes/scheduler).
      fireOccurrence(k, base, id, jk, f[2], priority, now, cap)
      fired = true
    else
      local state = pushReady(k, jk, id, priority, false)
      emit(k.events, cap, 'waiting', 'jobId', id, 'prev', 'delayed', 'state', state)
    end
  end
  signalWork(k.marker)
  return #due, fired
end


local function claimJobs(k, base, now, count, lockMs, tokenPrefix, exact, cap, paused, out)
  local _, fired = promoteDue(k, base, now, cap)
  local schedulersDue = 0
  if fired then schedulersDue = 1 end
  if paused then
    out[#out + 1] = 1
    out[#out + 1] = -1
    out[#out + 1] = 0
    out[#out + 1] = schedulersDue
    out[#out + 1] = 0
    return 0
  end
  local limited = redis.call('PTTL', k.limiter)
  if limited > 0 and count > 0 then
    out[#out + 1] = 0
    out[#out + 1] = -1
    out[#out + 1] = limited
    out[#out + 1] = schedulersDue
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
  if #ids < count or count == 0 then
    local first = redis.call('ZRANGE', k.delayed, 0, 0, 'WITHSCORES')
    if first[2] then nextDue = tonumber(first[2]) end
  end
  out[#out + 1] = 0
  out[#out + 1] = nextDue
  out[#out + 1] = 0
  out[#out + 1] = schedulersDue
  local countAt = #out + 1
  out[countAt] = 0
  local deadline = now + lockMs
  local claimed = 0
  local locks = {}
  local claimedIds = {}
  for i = 1, #ids do
    local id = ids[i]
    local jk = jobKey(base, id)
    local f = redis.call('HMGET', jk, 'n', 'd', 'o', 't', 'am', 'as', 'p', 'dl', 'pg', 'dc')
    if f[1] then
      claimed = claimed + 1
      local started = (tonumber(f[6]) or 0) + 1
      locks[#locks + 1] = deadline
      locks[#locks + 1] = id
      claimedIds[claimed] = id
      local token = tokenPrefix .. claimed
      if exact then token = tokenPrefix end
      redis.call('HSET', jk, 's', 'active', 'tk', token, 'as', started, 'po', now)
      -- The job goes back as the HMGET row itself (fewer table writes than copying it out):
      -- name, data, opts, timestamp, attemptsMade, attemptsStarted, priority, delay, progress, id.
      if not f[2] then f[2] = readData(base, id, jk, false, f[10]) end
      f[6] = started
      f[10] = id
      out[#out + 1] = f
    end
  end
  out[countAt] = claimed
  if claimed > 0 then
    redis.call('ZADD', k.active, unpack(locks))
    emitBatch(k.events, cap, 'active', claimedIds)
    if #ids == count and redis.call('LLEN', k.wait) + redis.call('ZCARD', k.prio) > 0 then
      -- Work is left: pass the wake-up on to the next idle worker.
      signalWork(k.marker)
    else
      -- This claim took the last ready jobs.
      emit(k.events, cap, 'drained')
    end
  end
  return claimed
end
