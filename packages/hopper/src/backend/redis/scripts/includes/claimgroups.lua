--[[ claimgroups: the claim's walk over the ring of ready groups (takeGrouped, docs/groups.md), and
  taking jobs one at a time under weighted windows (takeFitting: the queue's and a group's
  weighted limits, includes/window). Included by claim. ]]
--@include window

-- Takes up to `room` jobs one at a time from the head of a ready structure (the list `list` first
-- when given, then the sorted set `zkey`) while each job's cost (jobCost) fits the weighted windows
-- it counts in: `gw` its group's and `qw` the queue's (either may be nil), each { use, max, dur }
-- (`use` grows with each job taken). A job heavier than a whole window (cost > max) could never
-- fit: it is taken uncounted and marked in wt.heavy ('max:durationMs', ':group' for a group's
-- window) for the worker to fail it; the weights taken are recorded in wt.g / wt.q by job id.
-- Returns how many were taken, then, when the head job did not fit: 'g' or 'q' and its cost.
local function takeFitting(base, list, zkey, room, gw, qw, wt, ids)
  local n = 0
  while n < room do
    local id = list and redis.call('LINDEX', list, 0)
    local fromList = id and true
    if not id then id = redis.call('ZRANGE', zkey, 0, 0)[1] end
    if not id then return n end
    local w = jobCost(redis.call('HGET', jobKey(base, id), 'o'))
    if gw and w > gw.max then
      wt.heavy[id] = gw.max .. ':' .. gw.dur .. ':' .. gw.g
    elseif qw and w > qw.max then
      wt.heavy[id] = qw.max .. ':' .. qw.dur
    elseif gw and gw.use + w > gw.max then
      return n, 'g', w
    elseif qw and qw.use + w > qw.max then
      return n, 'q', w
    else
      if gw then
        gw.use = gw.use + w
        wt.g[id] = w
      end
      if qw then
        qw.use = qw.use + w
        wt.q[id] = w
      end
    end
    if fromList then redis.call('LPOP', list) else redis.call('ZPOPMIN', zkey) end
    ids[#ids + 1] = id
    n = n + 1
  end
  return n
end

-- Takes up to `want` jobs round-robin over the ring of ready groups ('' is the jobs without a
-- group), weighted by deficit round-robin: a group takes up to its weight in jobs per turn.
-- Each turn is O(1) in the number of groups; the ring is popped and pushed in batches (one LPOP
-- and one RPUSH per pass, the same order as one group at a time). A group at its concurrency
-- or rate limit leaves the ring (parked in `gp`, or in `gl` until its window reopens). Appends
-- the ids to `ids`, records each grouped job's group in `groupOf`, the groups whose active jobs
-- are counted (they have a concurrency limit) in `counted`, and the rate-limited groups' windows
-- in `windows` ({ key, duration }, plus the sum key for a weighted window).
-- Weighted limits (`qw` the queue's window, { use, max, dur }, or nil; a group's own weighted
-- limiter, or the default one): jobs are taken one by one while they fit (takeFitting; weights
-- in `wt`). A group whose head job does not fit its window is parked in `gl` until it fits;
-- a job that fits its group but not the queue stops the walk: its group keeps the head of the
-- ring (and what is left of its turn). Returns that job's cost when the queue's window stopped it.
local function takeGrouped(k, base, now, want, qs, ids, groupOf, counted, windows, qw, wt)
  local ring, gl = base .. 'gr', base .. 'gl'
  local G = groups()
  local reopened = redis.call('ZRANGEBYSCORE', gl, '-inf', intStr(now), 'LIMIT', '0', '100')
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
  -- Weighted group windows read by this call (by group, and in order), trimmed after the walk.
  local gwin = {}
  -- The cost of the job that did not fit the queue's weighted window: the walk stops.
  local blocked = nil
  local ringLen = redis.call('LLEN', ring)
  local defaultWeight = qs.gwt or 1
  -- With no group defaults (and no weighted queue limit), a group without settings of its own
  -- ('p' member) needs no read.
  local plainFast = not (qs.gcon or qs.glm or qs.gwt or qw)
  -- The jobs without a group had none this call: a group with only '' beside it is alone.
  local ungroupedEmpty = false
  while #ids < want and ringLen > 0 and not blocked do
    local size = ringLen
    local batch = redis.call('LPOP', ring, istr(math.min(ringLen, want - #ids)))
    ringLen = ringLen - #batch
    local alone = size == 1 or (size == 2 and ungroupedEmpty)
    local before = #ids
    local tail = {}
    local head = nil
    local stopAt = #batch + 1
    for j = 1, #batch do
      if #ids >= want or blocked then
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
        local stop, cost = nil, nil
        if qw then
          local _took
          _took, stop, cost = takeFitting(base, k.wait, k.prio, room, nil, qw, wt, ids)
        else
          local popped = redis.call('LPOP', k.wait, istr(room))
          if popped then for i = 1, #popped do ids[#ids + 1] = popped[i] end end
          if #ids - got < room then
            local pr = redis.call('ZPOPMIN', k.prio, istr(room - (#ids - got)))
            for i = 1, #pr, 2 do ids[#ids + 1] = pr[i] end
          end
        end
        local took = #ids - got
        ungroupedEmpty = took == 0 and not stop
        if stop then
          -- The queue's weighted window is full for the head job: it keeps the head of the ring.
          blocked = cost
          if defaultWeight > 1 and not alone and took > 0 then redis.call('HSET', k.meta, 'uq', quantum - took) end
          head = ''
        elseif defaultWeight > 1 and not alone and took > 0 and took < quantum and #ids >= want then
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
        local popped = redis.call('ZPOPMIN', G.groupQueueKey(base, g), istr(room))
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
        local f = redis.call('HMGET', gk, 'st', 'a', 'c', 'lm', 'ld', 'w', 'q', 'ms', 'lwt')
        -- Anything but 'r' is a stale ring entry (the group was parked or paused meanwhile): dropped.
        if f[1] == 'r' then
          local active = tonumber(f[2]) or 0
          local conc = tonumber(f[3]) or qs.gcon
          local counts = conc and conc > 0
          local lm, ld = tonumber(f[4]), tonumber(f[5])
          local lweighted = f[9] == '1'
          if not lm then lm, ld, lweighted = qs.glm, qs.gld, qs.glw end
          local weight = tonumber(f[6]) or defaultWeight
          local quantum = tonumber(f[7]) or weight
          local room = want - #ids
          -- Alone in the ring, the group need not hand over its turn.
          if not alone then room = math.min(room, quantum) end
          local park, reopen = nil, 0
          if conc and conc > 0 then
            if active >= conc then park = 'c' else room = math.min(room, conc - active) end
          end
          local gwk, gw
          if not park and lm and lm > 0 and lweighted then
            -- A weighted window (a running sum, includes/window): judged job by job below.
            gw = gwin[g]
            if not gw then
              local zkey, skey = base .. 'gx:' .. g, base .. 'gxs:' .. g
              local use, expired, freed = windowUse(zkey, skey, now, ld)
              gw = { use = use, max = lm, dur = ld, g = g, key = zkey, sum = skey, expired = expired, freed = freed }
              gwin[g] = gw
              gwin[#gwin + 1] = g
            end
          elseif not park and lm and lm > 0 then
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
            local n, stop, cost = 0, nil, nil
            if gw or qw then
              local got = #ids
              n, stop, cost = takeFitting(base, nil, groups().groupQueueKey(base, g), room, gw, qw, wt, ids)
              for i = got + 1, #ids do groupOf[ids[i]] = g end
              if gw and n > 0 then windows[g] = { gw.key, ld, gw.sum } end
            else
              local popped = redis.call('ZPOPMIN', groups().groupQueueKey(base, g), room)
              n = #popped / 2
              for i = 1, #popped, 2 do
                ids[#ids + 1] = popped[i]
                groupOf[popped[i]] = g
              end
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
            if stop == 'g' then
              -- Its head job does not fit its window: parked until it does (FIFO within the
              -- group: lighter jobs behind it wait too); the other groups go on.
              if counts and n > 0 then redis.call('HSET', gk, 'a', active) end
              redis.call('ZADD', gl, now + windowRoomIn(gw.key, now, ld, gw.use, cost, lm), g)
              redis.call('HSET', gk, 'st', 'l')
            elseif stop == 'q' then
              -- It fits its group but not the queue's window: the walk stops, and the group keeps
              -- the head of the ring with what is left of its turn.
              blocked = cost
              local fields = {}
              if counts and n > 0 then fields[1] = 'a'; fields[2] = active end
              if f[7] or quantum ~= weight then fields[#fields + 1] = 'q'; fields[#fields + 1] = quantum end
              if #fields > 0 then chunked('HSET', gk, fields, 2) end
              head = member
            elseif n < room then
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
  for i = 1, #gwin do
    local gw = gwin[gwin[i]]
    windowTrim(gw.key, gw.sum, gw.expired, gw.freed)
  end
  return blocked
end
