--[[ claim: promotes due delayed jobs, then takes up to `count` ready jobs (waiting first, then
  prioritized) for one worker, locking each until now + lockMs under token tokenPrefix .. i.
  Limits: the queue's global concurrency (qs.gcc) and sliding-window rate limit (the worker's
  `limit` 'max:durationMs', else the queue's), judged on the start times recorded in `lw`; with
  groups on, jobs are taken round-robin over the ring of ready groups (takeGrouped).
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
    local f = redis.call('HMGET', jk, 'p', 'sk', 'g')
    local priority = tonumber(f[1]) or 0
    if f[2] then
      -- A scheduler's occurrence: its scheduler's policies decide (includes/scheduler).
      fireOccurrence(k, base, id, jk, f[2], priority, now, cap)
      fired = true
    else
      local state = pushReady(k, jk, id, priority, false, f[3])
      emit(k.events, cap, 'waiting', 'jobId', id, 'prev', 'delayed', 'state', state)
    end
  end
  signalWork(k.marker)
  return #due, fired
end


-- Takes up to `want` jobs round-robin over the ring of ready groups ('' is the jobs without a
-- group), weighted by deficit round-robin: a group takes up to its weight in jobs per turn.
-- Each turn is O(1) in the number of groups. A group at its concurrency or rate limit leaves the
-- ring (parked 'c', or 'l' in `gl` until its window reopens). Appends the ids to `ids`, records
-- each grouped job's group in `groupOf`, and the rate-limited groups' windows in `windows`.
local function takeGrouped(k, base, now, want, qs, ids, groupOf, windows)
  local ring, gl = base .. 'gr', base .. 'gl'
  local reopened = redis.call('ZRANGEBYSCORE', gl, '-inf', now, 'LIMIT', 0, 100)
  if #reopened > 0 then
    redis.call('ZREM', gl, unpack(reopened))
    for i = 1, #reopened do redis.call('HSET', groupHashKey(base, reopened[i]), 'st', 'r') end
    redis.call('RPUSH', ring, unpack(reopened))
  end
  local ringLen = redis.call('LLEN', ring)
  local defaultWeight = qs.gwt or 1
  local missed = false
  while #ids < want and ringLen > 0 do
    local g = redis.call('LPOP', ring)
    ringLen = ringLen - 1
    if g == '' then
      -- The jobs without a group take their turn as one group.
      local room = want - #ids
      if ringLen > 0 then room = math.min(room, defaultWeight) end
      local before = #ids
      local popped = redis.call('LPOP', k.wait, room)
      if popped then for i = 1, #popped do ids[#ids + 1] = popped[i] end end
      if #ids - before < room then
        local pr = redis.call('ZPOPMIN', k.prio, room - (#ids - before))
        for i = 1, #pr, 2 do ids[#ids + 1] = pr[i] end
      end
      redis.call('RPUSH', ring, '')
      ringLen = ringLen + 1
      -- Twice round the ring without a job taken: nothing is ready.
      if #ids == before then
        if missed then break end
        missed = true
      else
        missed = false
      end
    else
      local gk = groupHashKey(base, g)
      local f = redis.call('HMGET', gk, 'st', 'a', 'c', 'lm', 'ld', 'w', 'q', 'ms')
      -- Anything but 'r' is a stale ring entry (the group was parked or paused meanwhile): dropped.
      if f[1] == 'r' then
        local active = tonumber(f[2]) or 0
        local conc = tonumber(f[3]) or qs.gcon
        local lm, ld = tonumber(f[4]), tonumber(f[5])
        if not lm then lm, ld = qs.glm, qs.gld end
        local weight = tonumber(f[6]) or defaultWeight
        local quantum = tonumber(f[7]) or weight
        -- Alone in the ring (or with only the idle ''), the group need not hand over its turn.
        local room = want - #ids
        if ringLen > 1 or (ringLen == 1 and not missed) then room = math.min(room, quantum) end
        local park, reopen = nil, 0
        if conc and conc > 0 then
          if active >= conc then park = 'c' else room = math.min(room, conc - active) end
        end
        local gwk
        if not park and lm and lm > 0 then
          gwk = groupWindowKey(base, g)
          redis.call('ZREMRANGEBYSCORE', gwk, '-inf', now - ld)
          local used = redis.call('ZCARD', gwk)
          if used >= lm then
            park = 'l'
            reopen = tonumber(redis.call('ZRANGE', gwk, 0, 0, 'WITHSCORES')[2]) + ld
          else
            room = math.min(room, lm - used)
          end
        end
        if park == 'c' then
          redis.call('HSET', gk, 'st', 'c')
        elseif park == 'l' then
          redis.call('ZADD', gl, reopen, g)
          redis.call('HSET', gk, 'st', 'l')
        else
          local popped = redis.call('ZPOPMIN', groupQueueKey(base, g), room)
          local n = #popped / 2
          for i = 1, #popped, 2 do
            ids[#ids + 1] = popped[i]
            groupOf[popped[i]] = g
          end
          if gwk and n > 0 then windows[g] = { gwk, ld } end
          active = active + n
          quantum = quantum - n
          if n > 0 then missed = false end
          if n < room then
            -- Its backlog is empty: the group is idle.
            idleGroup(base, g, gk, active, hasGroupSettings(f[3], f[4], f[8], f[6]))
          elseif conc and conc > 0 and active >= conc then
            redis.call('HSET', gk, 'a', active, 'st', 'c', 'q', weight)
          elseif quantum > 0 and #ids >= want then
            -- The claim is full mid-turn: the group keeps the head of the ring.
            redis.call('HSET', gk, 'a', active, 'q', quantum)
            redis.call('LPUSH', ring, g)
            ringLen = ringLen + 1
          else
            redis.call('HSET', gk, 'a', active, 'q', weight)
            redis.call('RPUSH', ring, g)
            ringLen = ringLen + 1
          end
        end
      end
    end
  end
end

-- Records the start of claimed job `id` (attempt `started`) in the sliding windows it counts in.
local function recordStart(starts, key, ttl, now, id, started)
  local list = starts[key]
  if not list then
    list = { ttl = ttl }
    starts[key] = list
    starts[#starts + 1] = key
  end
  list[#list + 1] = now
  list[#list + 1] = id .. ':' .. started
end

local function claimJobs(k, base, now, count, lockMs, tokenPrefix, exact, cap, paused, qs, limit, out)
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
  -- The rate limit: the worker's own (limit = 'max:durationMs'), else the queue's.
  local lmax, ldur = qs.lmax, qs.ldur
  if limit ~= '' then
    local sep = string.find(limit, ':', 1, true)
    lmax, ldur = tonumber(string.sub(limit, 1, sep - 1)), tonumber(string.sub(limit, sep + 1))
  end
  local want = count
  local lw = base .. 'lw'
  if limited <= 0 and want > 0 and lmax and lmax > 0 then
    redis.call('ZREMRANGEBYSCORE', lw, '-inf', now - ldur)
    local used = redis.call('ZCARD', lw)
    if used >= lmax then
      limited = math.max(tonumber(redis.call('ZRANGE', lw, 0, 0, 'WITHSCORES')[2]) + ldur - now, 1)
    else
      want = math.min(want, lmax - used)
    end
  end
  if limited > 0 and count > 0 then
    out[#out + 1] = 0
    out[#out + 1] = -1
    out[#out + 1] = limited
    out[#out + 1] = schedulersDue
    out[#out + 1] = 0
    return 0
  end
  if want > 0 and qs.gcc then want = math.min(want, math.max(qs.gcc - redis.call('ZCARD', k.active), 0)) end
  local ids = {}
  local groupOf, windows = nil, nil
  if want > 0 then
    if qs.groups then
      groupOf, windows = {}, {}
      takeGrouped(k, base, now, want, qs, ids, groupOf, windows)
    else
      local popped = redis.call('LPOP', k.wait, want)
      if popped then ids = popped end
      if #ids < want then
        local pr = redis.call('ZPOPMIN', k.prio, want - #ids)
        for i = 1, #pr, 2 do ids[#ids + 1] = pr[i] end
      end
    end
  end
  local nextDue = -1
  if #ids < count or count == 0 then
    local first = redis.call('ZRANGE', k.delayed, 0, 0, 'WITHSCORES')
    if first[2] then nextDue = tonumber(first[2]) end
    if qs.groups then
      -- A group parked by its rate limit reopens then: wake for it too.
      local reopen = redis.call('ZRANGE', base .. 'gl', 0, 0, 'WITHSCORES')
      if reopen[2] and (nextDue < 0 or tonumber(reopen[2]) < nextDue) then nextDue = tonumber(reopen[2]) end
    end
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
  local starts = {}
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
      if lmax and lmax > 0 then recordStart(starts, lw, ldur, now, id, started) end
      if groupOf and groupOf[id] and windows[groupOf[id]] then
        local w = windows[groupOf[id]]
        recordStart(starts, w[1], w[2], now, id, started)
      end
      -- The job goes back as the HMGET row itself (fewer table writes than copying it out):
      -- name, data, opts, timestamp, attemptsMade, attemptsStarted, priority, delay, progress, id.
      if not f[2] then f[2] = readData(base, id, jk, false, f[10]) end
      f[6] = started
      f[10] = id
      out[#out + 1] = f
    elseif groupOf and groupOf[id] then
      -- A job gone from under its group's queue: its slot is not taken.
      releaseGroup(base, groupOf[id], 1)
    end
  end
  out[countAt] = claimed
  for i = 1, #starts do
    local key = starts[i]
    redis.call('ZADD', key, unpack(starts[key]))
    redis.call('PEXPIRE', key, starts[key].ttl)
  end
  if claimed > 0 then
    redis.call('ZADD', k.active, unpack(locks))
    emitBatch(k.events, cap, 'active', claimedIds)
    if #ids == count and (qs.groups or redis.call('LLEN', k.wait) + redis.call('ZCARD', k.prio) > 0) then
      -- Work is left (with groups: may be): pass the wake-up on to the next idle worker.
      signalWork(k.marker)
    else
      -- This claim took the last ready jobs.
      emit(k.events, cap, 'drained')
    end
  end
  return claimed
end
