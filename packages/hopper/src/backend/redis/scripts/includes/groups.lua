--[[ groups: fair groups per tenant (job option `group: { id }`). Included by base.
  A group's ready jobs (waiting and prioritized) live in its own sorted set gq:<id> (score:
  priority, then FIFO counter, as in `prio`), not in `wait`/`prio`. Its record g:<id> holds:
    st  status: 'r' in the ring (ready), 'c' parked at its concurrency limit, 'l' parked by its
        rate limit (in `gl` until the window reopens), 'p' paused; absent: idle (no backlog)
    a   jobs of the group active now, counted while the group has a concurrency limit (its own or
        the queue's default): a claim marks the jobs it counts (job field `ga` = '1') and only
        those are released, so a group without a limit costs no write when its jobs finish;
        setting a limit counts the jobs already running (countActive)
    q   jobs left in its current turn (deficit round-robin)
    c, lm/ld, ms, w   its own concurrency, limiter (max per duration ms), maxSize, weight
    lwt '1' when its own limiter is weighted (counts each job's `cost`, window gx:<id> with its
        running sum gxs:<id>, includes/window; the queue default's flag is meta `glw`)
  Queue keys: `gr` the ring (list of ready groups: 'p' .. id for a group with no setting of its
  own, 's' .. id for one with settings, '' for the jobs without a group, which stays in it while
  groups are on; a claim takes a 'p' group's turn without reading its record while the queue has
  no group defaults), `gl` parked-by-rate-limit groups by reopen time, `gp` groups
  parked at their concurrency (set), `gs` every known group (sorted set, score 0, for listing),
  `gz` idle groups to forget once their last job leaves, gw:<id> a group's start times.
  Queue defaults (meta): gcon, glm/gld (glw: weighted), gms, gwt; meta `gm` marks a queue that has used groups,
  `uq` the jobs left in the current turn of the jobs without a group (with a default weight > 1).
  Invariant (checked by the audit): a group with a backlog is in exactly one of the ring, `gl`,
  parked at its concurrency (and then in `gp`), or paused; `a` equals its counted jobs actually
  active, and under a concurrency limit every active job of it is counted. The ring may hold a
  group whose backlog was removed meanwhile: the claim that pops it makes it idle. ]]

-- The group named in a job's options JSON (and its maxSize), or nil.
local function groupOfOpts(opts)
  if not opts or opts == '' or not string.find(opts, '"group":', 1, true) then return nil, nil end
  local ok, o = pcall(cjson.decode, opts)
  if ok and type(o) == 'table' and type(o.group) == 'table' and type(o.group.id) == 'string' then
    return o.group.id, tonumber(o.group.maxSize)
  end
  return nil, nil
end

-- The state of a ready job by priority (grouped or not).
local function readyState(priority)
  if priority > 0 then return 'prioritized' end
  return 'waiting'
end

-- The group functions are defined on first use (groups()), not at every script call: defining a
-- Lua function costs each call (~50 ns each), and most calls of the hot scripts never need them.
local groupsLib = nil

local function groups()
  if groupsLib then return groupsLib end
  local function groupHashKey(base, g) return base .. 'g:' .. g end
  local function groupQueueKey(base, g) return base .. 'gq:' .. g end
  local function groupWindowKey(base, g) return base .. 'gw:' .. g end

  -- A group's member in the ring: tagged by whether it has settings of its own (see above).
  local function ringMember(g, hasSettings)
    if hasSettings then return 's' .. g end
    return 'p' .. g
  end

  -- Whether a group record's own settings (values of c, lm, ms, w) hold any.
  local function hasGroupSettings(c, lm, ms, w)
    return c ~= false or lm ~= false or ms ~= false or w ~= false
  end

  -- Puts group `g` at the tail of the ring, reading whether it has settings of its own.
  local function pushRing(base, g)
    local f = redis.call('HMGET', groupHashKey(base, g), 'c', 'lm', 'ms', 'w')
    redis.call('RPUSH', base .. 'gr', ringMember(g, hasGroupSettings(f[1], f[2], f[3], f[4])))
  end

  -- Takes group `g` out of the ring (either member form).
  local function unlinkRing(base, g)
    redis.call('LREM', base .. 'gr', 0, 'p' .. g)
    redis.call('LREM', base .. 'gr', 0, 's' .. g)
  end

  -- Turns groups on for the queue (once): claims then go round the ring, where '' stands for the
  -- jobs without a group.
  local function enableGroups(base)
    if redis.call('HSETNX', base .. 'meta', 'gm', '1') == 1 then redis.call('RPUSH', base .. 'gr', '') end
  end

  -- A group that got a ready job joins the ring if it was idle.
  local function wakeGroup(base, g)
    local gk = groupHashKey(base, g)
    local f = redis.call('HMGET', gk, 'st', 'c', 'lm', 'ms', 'w')
    if f[1] then return end
    enableGroups(base)
    redis.call('HSET', gk, 'st', 'r')
    redis.call('RPUSH', base .. 'gr', ringMember(g, hasGroupSettings(f[2], f[3], f[4], f[5])))
    redis.call('ZADD', base .. 'gs', 0, g)
    signalWork(base .. 'marker')
  end

  -- Queues ready job `id` in group `g` (its state is recorded by the caller); `front` puts it
  -- first within its priority.
  local function queueGrouped(base, id, g, priority, front)
    local score = priority * PRIO_SHIFT
    if not front then score = score + redis.call('INCR', base .. 'pc') % PRIO_SHIFT end
    redis.call('ZADD', groupQueueKey(base, g), score, id)
    wakeGroup(base, g)
  end

  -- Puts ready job `id` of group `g` in the group's queue and records its state.
  local function pushGrouped(base, jk, id, g, priority, front)
    queueGrouped(base, id, g, priority, front)
    local state = readyState(priority)
    redis.call('HSET', jk, 's', state)
    return state
  end

  -- The backlog cap of group `g`: the add's own (group.maxSize), else the group's, else the queue's.
  local function groupMaxSize(base, g, own)
    if own then return own end
    local ms = tonumber(redis.call('HGET', groupHashKey(base, g), 'ms'))
    if ms then return ms end
    return tonumber(redis.call('HGET', base .. 'meta', 'gms'))
  end

  -- Notes that a call adds a job to group `g` (with the add's own maxSize, if any), for groupCaps.
  local function noteGroupAdd(order, g, own)
    if order[g] == nil then
      order[g] = own or false
      order[#order + 1] = g
    elseif own then
      order[g] = own
    end
  end

  -- The backlog caps of the groups a call adds to (group -> cap), or nil when none has one.
  local function groupCaps(base, order)
    local capped = nil
    for i = 1, #order do
      local g = order[i]
      local max = groupMaxSize(base, g, order[g] or nil)
      if max then
        capped = capped or {}
        capped[g] = max
      end
    end
    return capped
  end

  -- The first capped group that `counts` more ready jobs would take past its cap: the group, its
  -- cap and its backlog now; nil when all fit.
  local function overCap(base, order, capped, counts)
    for i = 1, #order do
      local g = order[i]
      if capped[g] and counts[g] then
        local size = redis.call('ZCARD', groupQueueKey(base, g))
        if size + counts[g] > capped[g] then return g, capped[g], size end
      end
    end
    return nil
  end

  -- Forgets a group with nothing to keep it: no active job, no setting of its own, not paused
  -- (its rate-limit window, if any, expires by itself).
  local function forgetGroup(base, g, gk)
    redis.call('DEL', gk)
    redis.call('ZREM', base .. 'gs', g)
  end

  -- A group with no backlog: idle (out of the ring, no status). It is forgotten now if nothing
  -- holds it; with jobs still active, it is left for a later claim to forget (`gz`, see
  -- sweepIdleGroups), so releases stay one call.
  local function idleGroup(base, g, gk, active, hasSettings)
    if active == 0 and not hasSettings then
      forgetGroup(base, g, gk)
      return
    end
    redis.call('HDEL', gk, 'st', 'q')
    if not hasSettings then redis.call('RPUSH', base .. 'gz', g) end
  end

  -- Forgets up to `count` idle groups left by idleGroup once their last active job is gone; one
  -- still running goes back to the end of the list.
  local function sweepIdleGroups(base, count)
    local candidates = redis.call('LPOP', base .. 'gz', count)
    if not candidates then return end
    for i = 1, #candidates do
      local g = candidates[i]
      local gk = groupHashKey(base, g)
      local f = redis.call('HMGET', gk, 'st', 'a', 'c', 'lm', 'ms', 'w')
      if not f[1] and not hasGroupSettings(f[3], f[4], f[5], f[6]) then
        if (tonumber(f[2]) or 0) > 0 then
          redis.call('RPUSH', base .. 'gz', g)
        elseif redis.call('ZCARD', groupQueueKey(base, g)) == 0 then
          forgetGroup(base, g, gk)
        end
      end
    end
  end

  -- Parks group `g` at its concurrency limit: out of the ring, in `gp` until a job of it leaves active.
  local function parkAtConcurrency(base, g, gk, active, weight)
    redis.call('HSET', gk, 'a', active, 'st', 'c', 'q', weight)
    redis.call('SADD', base .. 'gp', g)
  end

  -- `n` jobs of group `g` left active (finished, retried, delayed, rescued...): frees their slots
  -- (one HINCRBY). A group parked at its concurrency (in `gp`) goes back to the ring if it has a
  -- backlog. `parkedAny` false: the caller knows no group is parked (skips the check).
  local function releaseGroup(base, g, n, parkedAny)
    local gk = groupHashKey(base, g)
    local active = redis.call('HINCRBY', gk, 'a', -n)
    if active < 0 then
      active = 0
      redis.call('HSET', gk, 'a', 0)
    end
    if parkedAny ~= false and redis.call('SREM', base .. 'gp', g) == 1 then
      local f = redis.call('HMGET', gk, 'c', 'lm', 'ms', 'w')
      local hasSettings = hasGroupSettings(f[1], f[2], f[3], f[4])
      if redis.call('ZCARD', groupQueueKey(base, g)) > 0 then
        redis.call('HSET', gk, 'st', 'r')
        redis.call('RPUSH', base .. 'gr', ringMember(g, hasSettings))
        signalWork(base .. 'marker')
      else
        idleGroup(base, g, gk, active, hasSettings)
      end
    end
  end

  -- A job leaves active (one job, outside the batch scripts): releases its group's slot if it was
  -- counted. Returns the job's group (false if none).
  local function leaveActive(base, jk)
    local f = redis.call('HMGET', jk, 'g', 'ga')
    if f[1] and f[2] == '1' then releaseGroup(base, f[1], 1) end
    return f[1]
  end

  -- Counts the running jobs of group `only` (or of every group when nil) that no claim counted yet,
  -- when a concurrency limit is set: the limit then holds from the first claim. O(active jobs).
  local function countActive(base, only)
    local ids = redis.call('ZRANGE', base .. 'active', 0, -1)
    local add, order = {}, {}
    for i = 1, #ids do
      local jk = jobKey(base, ids[i])
      local f = redis.call('HMGET', jk, 'g', 'ga')
      if f[1] and f[2] ~= '1' and (only == nil or f[1] == only) then
        redis.call('HSET', jk, 'ga', '1')
        if not add[f[1]] then
          add[f[1]] = 0
          order[#order + 1] = f[1]
        end
        add[f[1]] = add[f[1]] + 1
      end
    end
    for i = 1, #order do
      local g = order[i]
      local gk = groupHashKey(base, g)
      redis.call('HINCRBY', gk, 'a', add[g])
      redis.call('ZADD', base .. 'gs', 0, g)
      -- An idle group (forgotten, or never recorded) is forgotten again once these jobs finish.
      if not redis.call('HGET', gk, 'st') then redis.call('RPUSH', base .. 'gz', g) end
    end
  end

  -- Takes a ready job of group `g` out of its group queue (remove, cancel, priority change).
  local function unqueueGrouped(base, id, g)
    redis.call('ZREM', groupQueueKey(base, g), id)
  end

  groupsLib = {
    groupHashKey = groupHashKey, groupQueueKey = groupQueueKey, groupWindowKey = groupWindowKey,
    ringMember = ringMember, hasGroupSettings = hasGroupSettings, pushRing = pushRing,
    unlinkRing = unlinkRing, enableGroups = enableGroups, wakeGroup = wakeGroup,
    queueGrouped = queueGrouped, pushGrouped = pushGrouped, groupMaxSize = groupMaxSize,
    noteGroupAdd = noteGroupAdd, groupCaps = groupCaps, overCap = overCap,
    forgetGroup = forgetGroup, idleGroup = idleGroup, sweepIdleGroups = sweepIdleGroups,
    parkAtConcurrency = parkAtConcurrency, releaseGroup = releaseGroup, leaveActive = leaveActive,
    countActive = countActive, unqueueGrouped = unqueueGrouped
  }
  return groupsLib
end


-- Collects the groups of counted jobs (`counted` = the job's `ga`) leaving active in one call,
-- released together by flushReleases.
local function noteRelease(rel, g, counted)
  if not g or counted ~= '1' then return end
  if not rel[g] then
    rel[g] = 0
    rel[#rel + 1] = g
  end
  rel[g] = rel[g] + 1
end

local function flushReleases(base, rel)
  if #rel == 0 then return end
  local parkedAny = redis.call('EXISTS', base .. 'gp') == 1
  local release = groups().releaseGroup
  for i = 1, #rel do release(base, rel[i], rel[rel[i]], parkedAny) end
end
