--[[ claim: promotes due delayed jobs, then takes up to `count` ready jobs (waiting first, then
  prioritized) for one worker, locking each until now + lockMs under token tokenPrefix .. i.
  Limits: the queue's global concurrency (qs.gcc) and sliding-window rate limit (the worker's
  `limit` 'max:durationMs', else the queue's), judged on the start times recorded in `lw`; with
  groups on, jobs are taken round-robin over the ring of ready groups (takeGrouped).
  Appends to `out`: paused flag, next delayed due time (or -1), ms left of a rate limit (0 if
  none), whether a scheduler needs advancing (0/1), the number of jobs, then one row per job: { name, data, opts, timestamp, attemptsMade,
  attemptsStarted, priority, delay, progress, id, stalledCounter, failedReason } (absent values are nil). With `exact`, the single claimed
  job's token is tokenPrefix itself (manual processing with the caller's token). Used by claim, complete and fail so a worker acknowledges
  finished jobs and takes the next ones in one round trip. At most CLAIM_MAX (1,000) jobs per call.
  `by` (the worker's name, or '') is stored on each claimed job as `pb` (processedBy).
  A weighted limit ('max:durationMs:w', or the queue's with meta `lwt`) counts each job's `cost`
  (default 1) instead of 1, in the window `lx`/`lxs` (includes/window): jobs are looked at one by
  one from the head and taken while their weight fits; the first that does not fit stays at the
  head (FIFO, so a heavy job is not overtaken forever) and the claim reports when it will fit. A
  job heavier than the whole window could never fit: it is taken without being counted and its
  row carries a 13th value 'max:durationMs', for the worker to fail it. Weighted limits do not
  apply to queues with groups (refused with an error before anything is written). ]]
--@include window

local PROMOTE_BATCH = 1000
-- Most jobs one call claims: a worker with more free slots asks again (runtime/dispatcher).
local CLAIM_MAX = 1000

-- Moves delayed jobs whose due time has come to their ready structure (bounded per call).
-- Returns how many jobs were promoted, and whether a scheduler's occurrence fell due (its
-- scheduler then needs its next occurrence, which TypeScript computes).
local function promoteDue(k, base, now, cap)
  local scored = redis.call('ZRANGEBYSCORE', k.delayed, '-inf', now, 'WITHSCORES', 'LIMIT', 0, PROMOTE_BATCH)
  if #scored == 0 then return 0, false end
  local due, dueAt = {}, {}
  local tie = false
  for i = 1, #scored, 2 do
    due[#due + 1] = scored[i]
    dueAt[#dueAt + 1] = tonumber(scored[i + 1])
    if i > 1 and scored[i + 1] == scored[i - 1] then tie = true end
  end
  if tie then
    -- Jobs due at the same ms come out of the sorted set in member (string) order: '10' before
    -- '9'. Put them back in add order (auto ids numerically, FIFO as BullMQ); rare, so sorted
    -- only when there is a tie.
    local order = {}
    for i = 1, #due do order[i] = i end
    table.sort(order, function(a, b)
      if dueAt[a] ~= dueAt[b] then return dueAt[a] < dueAt[b] end
      local na = string.match(due[a], '^%d+$') and tonumber(due[a])
      local nb = string.match(due[b], '^%d+$') and tonumber(due[b])
      if na and nb then return na < nb end
      if na or nb then return na ~= nil end
      return due[a] < due[b]
    end)
    local ids, ats = {}, {}
    for i = 1, #order do
      ids[i] = due[order[i]]
      ats[i] = dueAt[order[i]]
    end
    due, dueAt = ids, ats
  end
  local fired = false
  chunked('ZREM', k.delayed, due)
  for i = 1, #due do
    local id = due[i]
    local jk = jobKey(base, id)
    local f = redis.call('HMGET', jk, 'p', 'sk', 'g', 'as')
    local priority = tonumber(f[1]) or 0
    if f[2] and not f[4] then
      -- A scheduler's occurrence (never started: a retry is an ordinary job): its scheduler's
      -- policies decide (includes/scheduler), lateness counted from its due time.
      fireOccurrence(k, base, id, jk, f[2], priority, dueAt[i], now, cap)
      fired = true
    else
      -- Its delay is over (job.delay reads 0 from now on, as BullMQ).
      redis.call('HDEL', jk, 'dl')
      local state = pushReady(k, jk, id, priority, false, f[3])
      emit(k.events, cap, 'waiting', 'jobId', id, 'prev', 'delayed', 'state', state)
    end
  end
  signalWork(k.marker)
  return #due, fired
end


-- Takes up to `want` jobs round-robin over the ring of ready groups ('' is the jobs without a
-- group), weighted by deficit round-robin: a group takes up to its weight in jobs per turn.
-- Each turn is O(1) in the number of groups; the ring is popped and pushed in batches (one LPOP
-- and one RPUSH per pass, the same order as one group at a time). A group at its concurrency
-- or rate limit leaves the ring (parked in `gp`, or in `gl` until its window reopens). Appends
-- the ids to `ids`, records each grouped job's group in `groupOf`, the groups whose active jobs
-- are counted (they have a concurrency limit) in `counted`, and the rate-limited groups' windows
-- in `windows`.
local function takeGrouped(k, base, now, want, qs, ids, groupOf, counted, windows)
  local ring, gl = base .. 'gr', base .. 'gl'
  local reopened = redis.call('ZRANGEBYSCORE', gl, '-inf', now, 'LIMIT', 0, 100)
  if #reopened > 0 then
    chunked('ZREM', gl, reopened)
    for i = 1, #reopened do
      redis.call('HSET', groups().groupHashKey(base, reopened[i]), 'st', 'r')
      groups().pushRing(base, reopened[i])
    end
  end
  groups().sweepIdleGroups(base, 2)
  -- Starts this call made per group: a group's rate-limit window is written only after the walk,
  -- so a group that gets a second turn in the same claim must count its own starts.
  local taken = {}
  local ringLen = redis.call('LLEN', ring)
  local defaultWeight = qs.gwt or 1
  -- With no group defaults, a group without settings of its own ('p' member) needs no read.
  local plainFast = not (qs.gcon or qs.glm or qs.gwt)
  -- The jobs without a group had none this call: a group with only '' beside it is alone.
  local ungroupedEmpty = false
  while #ids < want and ringLen > 0 do
    local size = ringLen
    local batch = redis.call('LPOP', ring, math.min(ringLen, want - #ids))
    ringLen = ringLen - #batch
    local alone = size == 1 or (size == 2 and ungroupedEmpty)
    local before = #ids
    local tail = {}
    local head = nil
    local stopAt = #batch + 1
    for j = 1, #batch do
      if #ids >= want then
        stopAt = j
        break
      end
      local member = batch[j]
      if member == '' then
        -- The jobs without a group take their turn as one group, of the default weight; what is
        -- left of a turn that a full claim cut short is kept in meta `uq` (a group's `q`).
        local room = want - #ids
        local quantum = defaultWeight
        if not alone then
          if defaultWeight > 1 then quantum = tonumber(redis.call('HGET', k.meta, 'uq')) or defaultWeight end
          room = math.min(room, quantum)
        end
        local got = #ids
        local popped = redis.call('LPOP', k.wait, room)
        if popped then for i = 1, #popped do ids[#ids + 1] = popped[i] end end
        if #ids - got < room then
          local pr = redis.call('ZPOPMIN', k.prio, room - (#ids - got))
          for i = 1, #pr, 2 do ids[#ids + 1] = pr[i] end
        end
        local took = #ids - got
        ungroupedEmpty = took == 0
        if defaultWeight > 1 and not alone and took > 0 and took < quantum and #ids >= want then
          redis.call('HSET', k.meta, 'uq', quantum - took)
          head = ''
        else
          if quantum ~= defaultWeight then redis.call('HDEL', k.meta, 'uq') end
          tail[#tail + 1] = ''
        end
      elseif plainFast and string.byte(member, 1) == 112 then
        -- 'p': a group with no setting of its own and no queue defaults: one job per turn (all
        -- it has, alone in the ring), nothing counted, nothing to write.
        local g = string.sub(member, 2)
        local room = want - #ids
        if not alone then room = 1 end
        local popped = redis.call('ZPOPMIN', groups().groupQueueKey(base, g), room)
        for i = 1, #popped, 2 do
          ids[#ids + 1] = popped[i]
          groupOf[popped[i]] = g
        end
        if #popped / 2 < room then
          -- Its backlog is empty: idle (jobs it counted under a limit since removed may still run).
          local gk = groups().groupHashKey(base, g)
          groups().idleGroup(base, g, gk, tonumber(redis.call('HGET', gk, 'a')) or 0, false)
        else
          tail[#tail + 1] = member
        end
      else
        local g = string.sub(member, 2)
        local gk = groups().groupHashKey(base, g)
        local f = redis.call('HMGET', gk, 'st', 'a', 'c', 'lm', 'ld', 'w', 'q', 'ms')
        -- Anything but 'r' is a stale ring entry (the group was parked or paused meanwhile): dropped.
        if f[1] == 'r' then
          local active = tonumber(f[2]) or 0
          local conc = tonumber(f[3]) or qs.gcon
          local counts = conc and conc > 0
          local lm, ld = tonumber(f[4]), tonumber(f[5])
          if not lm then lm, ld = qs.glm, qs.gld end
          local weight = tonumber(f[6]) or defaultWeight
          local quantum = tonumber(f[7]) or weight
          local room = want - #ids
          -- Alone in the ring, the group need not hand over its turn.
          if not alone then room = math.min(room, quantum) end
          local park, reopen = nil, 0
          if conc and conc > 0 then
            if active >= conc then park = 'c' else room = math.min(room, conc - active) end
          end
          local gwk
          if not park and lm and lm > 0 then
            gwk = groups().groupWindowKey(base, g)
            redis.call('ZREMRANGEBYSCORE', gwk, '-inf', now - ld)
            local used = redis.call('ZCARD', gwk) + (taken[g] or 0)
            if used >= lm then
              park = 'l'
              -- An empty window here means this call's own starts filled it: they began now.
              reopen = (tonumber(redis.call('ZRANGE', gwk, 0, 0, 'WITHSCORES')[2]) or now) + ld
            else
              room = math.min(room, lm - used)
            end
          end
          if park == 'c' then
            groups().parkAtConcurrency(base, g, gk, active, weight)
          elseif park == 'l' then
            redis.call('ZADD', gl, reopen, g)
            redis.call('HSET', gk, 'st', 'l')
          else
            local popped = redis.call('ZPOPMIN', groups().groupQueueKey(base, g), room)
            local n = #popped / 2
            for i = 1, #popped, 2 do
              ids[#ids + 1] = popped[i]
              groupOf[popped[i]] = g
            end
            if gwk and n > 0 then
              windows[g] = { gwk, ld }
              taken[g] = (taken[g] or 0) + n
            end
            if counts then
              counted[g] = true
              active = active + n
            end
            quantum = quantum - n
            if n < room then
              -- Its backlog is empty: the group is idle.
              if counts and n > 0 then redis.call('HSET', gk, 'a', active) end
              groups().idleGroup(base, g, gk, active, groups().hasGroupSettings(f[3], f[4], f[8], f[6]))
            elseif counts and active >= conc then
              groups().parkAtConcurrency(base, g, gk, active, weight)
            else
              -- Mid-turn (the claim is full): it keeps the head of the ring; else the tail, with a
              -- new turn. Only what changed is written (nothing, for a plain group).
              local midTurn = quantum > 0 and #ids >= want
              local q = midTurn and quantum or weight
              local fields = {}
              if counts then fields[1] = 'a'; fields[2] = active end
              if f[7] or q ~= weight then fields[#fields + 1] = 'q'; fields[#fields + 1] = q end
              if #fields > 0 then chunked('HSET', gk, fields, 2) end
              if midTurn then head = member else tail[#tail + 1] = member end
            end
          end
        end
      end
    end
    -- Members of the batch not reached go back to the head in order, after a group mid-turn.
    local front = {}
    for j = #batch, stopAt, -1 do front[#front + 1] = batch[j] end
    if head then front[#front + 1] = head end
    if #front > 0 then chunked('LPUSH', ring, front) end
    if #tail > 0 then chunked('RPUSH', ring, tail) end
    ringLen = ringLen + #front + #tail
    -- A whole turn of the ring without a job: nothing is ready.
    if #ids == before and #batch == size then break end
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

-- Refuses a weighted limit on a queue that uses groups, before the calling script writes anything
-- (claim, complete and fail call it right after reading the queue's settings).
local function checkWeighted(qs, limit)
  if not qs.groups then return end
  local weighted
  if limit ~= '' then weighted = select(2, string.gsub(limit, ':', '')) == 2 else weighted = qs.lwt and qs.lmax ~= nil end
  if weighted then
    error({ err = 'HOPPER_WEIGHTED_GROUPS weighted rate limits (limiter.weight, setGlobalRateLimit weighted) do not apply to a queue that uses groups: use a plain limiter, or a queue without groups' })
  end
end

-- `firedBefore`: the caller already promoted due jobs itself (fail), and a scheduler's occurrence fell due.
-- Appends the reply of a claim that takes no job: `paused` (1 or 0) and `limited` (ms until the
-- rate limit lets a job start; 0: not limited).
local function appendNoJob(out, paused, limited, schedulersDue)
  out[#out + 1] = paused
  out[#out + 1] = -1
  out[#out + 1] = limited
  out[#out + 1] = schedulersDue
  out[#out + 1] = 0
end

local function claimJobs(k, base, now, count, lockMs, tokenPrefix, exact, cap, paused, qs, limit, by, out, firedBefore)
  if count > CLAIM_MAX then count = CLAIM_MAX end
  -- The rate limit: the worker's own (limit = 'max:durationMs', ':w' when weighted), else the queue's.
  local lmax, ldur, weighted = qs.lmax, qs.ldur, qs.lwt
  if limit ~= '' then
    local sep = string.find(limit, ':', 1, true)
    local sep2 = string.find(limit, ':', sep + 1, true)
    lmax = tonumber(string.sub(limit, 1, sep - 1))
    ldur = tonumber(string.sub(limit, sep + 1, (sep2 or 0) - 1))
    weighted = sep2 ~= nil
  end
  weighted = weighted and lmax ~= nil and lmax > 0
  local promoted, fired = promoteDue(k, base, now, cap)
  -- Promoting a due grouped job may have turned groups on after the settings were read.
  if promoted > 0 and not qs.groups and redis.call('HEXISTS', k.meta, 'gm') == 1 then qs.groups = true end
  local schedulersDue = 0
  if fired or firedBefore then schedulersDue = 1 end
  if paused then
    appendNoJob(out, 1, 0, schedulersDue)
    return 0
  end
  local limited = redis.call('PTTL', k.limiter)
  -- Groups turned on by this call's promotion under a weighted limit (refused by checkWeighted at
  -- the next call): take nothing now.
  if weighted and qs.groups and limited <= 0 then limited = 1000 end
  local want = count
  local lw = base .. 'lw'
  local wkey, wsum, wuse, wexpired, wfreed = base .. 'lx', base .. 'lxs', 0, nil, 0
  if weighted then
    if limited <= 0 and want > 0 then wuse, wexpired, wfreed = windowUse(wkey, wsum, now, ldur) end
  elseif limited <= 0 and want > 0 and lmax and lmax > 0 then
    redis.call('ZREMRANGEBYSCORE', lw, '-inf', now - ldur)
    local used = redis.call('ZCARD', lw)
    if used >= lmax then
      limited = math.max(tonumber(redis.call('ZRANGE', lw, 0, 0, 'WITHSCORES')[2]) + ldur - now, 1)
    else
      want = math.min(want, lmax - used)
    end
  end
  if limited > 0 and count > 0 then
    appendNoJob(out, 0, limited, schedulersDue)
    return 0
  end
  if want > 0 and qs.gcc then want = math.min(want, math.max(qs.gcc - redis.call('ZCARD', k.active), 0)) end
  local ids = {}
  local groupOf, counted, windows = nil, nil, nil
  local weights, heavy = nil, nil
  if want > 0 and wexpired then
    -- Weighted: one job at a time from the head, while its weight fits.
    weights, heavy = {}, {}
    while #ids < want do
      local id = redis.call('LINDEX', k.wait, 0)
      local fromPrio = not id
      if fromPrio then id = redis.call('ZRANGE', k.prio, 0, 0)[1] end
      if not id then break end
      local w = jobCost(redis.call('HGET', jobKey(base, id), 'o'))
      if w > lmax then
        heavy[id] = true
      elseif wuse + w > lmax then
        if #ids == 0 then limited = windowRoomIn(wkey, now, ldur, wuse, w, lmax) end
        break
      else
        wuse = wuse + w
        weights[id] = w
      end
      if fromPrio then redis.call('ZPOPMIN', k.prio) else redis.call('LPOP', k.wait) end
      ids[#ids + 1] = id
    end
    windowTrim(wkey, wsum, wexpired, wfreed)
    if limited > 0 then
      appendNoJob(out, 0, limited, schedulersDue)
      return 0
    end
  elseif want > 0 then
    if qs.groups then
      groupOf, counted, windows = {}, {}, {}
      takeGrouped(k, base, now, want, qs, ids, groupOf, counted, windows)
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
  local wtotal = 0
  for i = 1, #ids do
    local id = ids[i]
    local jk = jobKey(base, id)
    local f = redis.call('HMGET', jk, 'n', 'd', 'o', 't', 'am', 'as', 'p', 'dl', 'pg', 'dc', 'sc', 'fr')
    if f[1] then
      claimed = claimed + 1
      local started = (tonumber(f[6]) or 0) + 1
      locks[#locks + 1] = deadline
      locks[#locks + 1] = id
      claimedIds[claimed] = id
      local token = tokenPrefix .. claimed
      if exact then token = tokenPrefix end
      local g = groupOf and groupOf[id]
      if g then
        -- A grouped job records whether its group counted it (released when it leaves active).
        redis.call('HSET', jk, 's', 'active', 'tk', token, 'as', started, 'po', now, 'ga', counted[g] and '1' or '0')
      elseif by == '' then
        redis.call('HSET', jk, 's', 'active', 'tk', token, 'as', started, 'po', now)
      else
        redis.call('HSET', jk, 's', 'active', 'tk', token, 'as', started, 'po', now, 'pb', by)
      end
      if g and by ~= '' then redis.call('HSET', jk, 'pb', by) end
      if weights then
        if weights[id] then
          recordStart(starts, wkey, ldur, now, id .. ':' .. started, weights[id])
          wtotal = wtotal + weights[id]
        end
      elseif lmax and lmax > 0 then
        recordStart(starts, lw, ldur, now, id, started)
      end
      if g and windows[g] then
        local w = windows[g]
        recordStart(starts, w[1], w[2], now, id, started)
      end
      -- The job goes back as the HMGET row itself (fewer table writes than copying it out):
      -- name, data, opts, timestamp, attemptsMade, attemptsStarted, priority, delay, progress, id,
      -- stalledCounter, failedReason (of the previous attempt).
      if not f[2] then f[2] = readData(base, id, jk, false, f[10]) end
      f[6] = started
      f[10] = id
      if heavy and heavy[id] then f[13] = lmax .. ':' .. ldur end
      out[#out + 1] = f
    elseif groupOf and groupOf[id] and counted[groupOf[id]] then
      -- A job gone from under its group's queue: its slot is not taken.
      groups().releaseGroup(base, groupOf[id], 1)
    end
  end
  out[countAt] = claimed
  if wtotal > 0 then
    redis.call('INCRBYFLOAT', wsum, wtotal)
    redis.call('PEXPIRE', wsum, ldur)
  end
  for i = 1, #starts do
    local key = starts[i]
    chunked('ZADD', key, starts[key], 2)
    redis.call('PEXPIRE', key, starts[key].ttl)
  end
  if claimed > 0 then
    chunked('ZADD', k.active, locks, 2)
    emitBatch(k.events, cap, 'active', claimedIds)
    if #ids == count and (qs.groups or redis.call('LLEN', k.wait) + redis.call('ZCARD', k.prio) > 0) then
      -- Work is left (with groups: may be): pass the wake-up on to the next idle worker.
      signalWork(k.marker)
    end
  end
  return claimed
end

-- BullMQ's global `drained`, emitted by complete and fail when the worker that finished jobs claimed
-- none: nothing is ready (waiting, prioritized, or in a group's queue) and nothing is active.
local function emitIfDrained(k, base, cap, qs)
  if redis.call('ZCARD', k.active) > 0 or redis.call('LLEN', k.wait) > 0 or redis.call('ZCARD', k.prio) > 0 then return end
  if qs.groups and (redis.call('LLEN', base .. 'gr') > 0 or redis.call('ZCARD', base .. 'gl') > 0) then return end
  emit(k.events, cap, 'drained')
end
