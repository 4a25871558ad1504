--[[ scheduler: what happens when a scheduler's occurrence falls due (called wherever delayed jobs
  are promoted). A scheduler lives in hash base..'s:'..id (see advanceScheduler for its fields);
  an occurrence is a delayed job whose `sk` field names its scheduler.
  The decision, in order:
  1. missed: the scheduler's pending occurrence fell due (its instant plus jitter: its delayed
     score) longer ago than the catch-up window, or (policy latest/none) the next occurrence is
     already due too (`after` holds its due time): it does not run, it is counted in `missed`,
     and catch-up planning (advanceScheduler) takes over from its instant;
  2. overlap: the previous run is not terminal (waiting, active, delayed for a retry, waiting for
     children): `skip` drops it (counted in `skipped`); `bufferOne` lets one occurrence wait behind
     the running one and drops further ones; `allowAll` runs it;
  3. otherwise it becomes ready like any job, its instant is recorded among the fired ones
     (bounded), and it is the scheduler's latest run.
  Either way the scheduler is marked due for advancing (its next occurrence is computed in
  TypeScript, where the cron and time-zone rules live).
  Only an occurrence that never started comes here: a retry of one (delayed for its backoff, or
  moved to delayed by its processor; `as` set) is an ordinary job and is promoted as such. ]]

local FIRED_RECORD_MAX = 1000

local function isLive(base, jobId)
  if not jobId or jobId == '' then return false end
  local state = redis.call('HGET', jobKey(base, jobId), 's')
  return state ~= false and state ~= 'completed' and state ~= 'failed'
end

-- Returns true if the occurrence was made ready, false if it was dropped (job deleted). `due` is
-- the time it was due (its delayed score): lateness is counted from it.
local function fireOccurrence(k, base, id, jk, schedId, priority, due, now, cap)
  local sk = base .. 's:' .. schedId
  local s = redis.call('HMGET', sk, 'ov', 'cu', 'cw', 'after', 'run', 'buf', 'pid', 'inst')
  redis.call('ZADD', base .. 'sched-due', now, schedId)
  if not s[1] then
    -- The scheduler is gone (removed between the occurrence's creation and now): drop it.
    deleteJob(base, id)
    return false
  end
  local instant = tonumber(redis.call('HGET', jk, 'si')) or now
  local reason = nil
  if id == s[7] then
    local late = now - (due or instant)
    if late > tonumber(s[3]) then
      reason = 'missed'
    elseif s[2] ~= 'all' and s[4] and s[4] ~= '' and tonumber(s[4]) <= now then
      reason = 'missed'
    end
  end
  if not reason then
    local running = isLive(base, s[5])
    if running and s[1] == 'skip' then
      reason = 'skipped'
    elseif running and s[1] == 'bufferOne' and isLive(base, s[6]) then
      reason = 'skipped'
    end
  end
  if reason then
    redis.call('HINCRBY', sk, reason, 1)
    deleteJob(base, id)
    emit(k.events, cap, 'scheduler-' .. reason, 'schedulerId', schedId, 'jobId', id)
    return false
  end
  if s[1] == 'bufferOne' and isLive(base, s[5]) then
    redis.call('HSET', sk, 'buf', id)
  else
    redis.call('HSET', sk, 'run', id, 'buf', '')
  end
  redis.call('HINCRBY', sk, 'fired', 1)
  local fk = base .. 'sf:' .. schedId
  redis.call('ZADD', fk, instant, instant)
  if redis.call('ZCARD', fk) > FIRED_RECORD_MAX then redis.call('ZREMRANGEBYRANK', fk, 0, 0) end
  local state = pushReady(k, jk, id, priority, false)
  emit(k.events, cap, 'waiting', 'jobId', id, 'prev', 'delayed', 'state', state)
  return true
end
