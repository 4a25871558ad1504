--[[ groups: fair groups per tenant (job option `group: { id }`). Included by base.
  A group's ready jobs (waiting and prioritized) live in its own sorted set gq:<id> (score:
  priority, then FIFO counter, as in `prio`), not in `wait`/`prio`. Its record g:<id> holds:
    st  status: 'r' in the ring (ready), 'c' parked at its concurrency limit, 'l' parked by its
        rate limit (in `gl` until the window reopens), 'p' paused; absent: idle (no backlog)
    a   jobs of the group active now
    q   jobs left in its current turn (deficit round-robin)
    c, lm/ld, ms, w   its own concurrency, limiter (max per duration ms), maxSize, weight
  Queue keys: `gr` the ring (list of ready groups; '' stands for the jobs without a group and
  stays in it while groups are on), `gl` parked-by-rate-limit groups by reopen time, `gs` every
  known group (sorted set, score 0, for listing), gw:<id> a group's start times (sliding window).
  Queue defaults (meta): gcon, glm/gld, gms, gwt; meta `gm` marks a queue that has used groups.
  Invariant (checked by the audit): a group with a backlog is in exactly one of the ring, `gl`,
  parked at its concurrency, or paused; `a` equals its jobs actually active. The ring may hold a
  group whose backlog was removed meanwhile: the claim that pops it makes it idle. ]]

local function groupHashKey(base, g) return base .. 'g:' .. g end
local function groupQueueKey(base, g) return base .. 'gq:' .. g end
local function groupWindowKey(base, g) return base .. 'gw:' .. g end

-- The group named in a job's options JSON (and its maxSize), or nil.
local function groupOfOpts(opts)
  if not opts or opts == '' or not string.find(opts, '"group":', 1, true) then return nil, nil end
  local ok, o = pcall(cjson.decode, opts)
  if ok and type(o) == 'table' and type(o.group) == 'table' and type(o.group.id) == 'string' then
    return o.group.id, tonumber(o.group.maxSize)
  end
  return nil, nil
end

-- Turns groups on for the queue (once): claims then go round the ring, where '' stands for the
-- jobs without a group.
local function enableGroups(base)
  if redis.call('HSETNX', base .. 'meta', 'gm', '1') == 1 then redis.call('RPUSH', base .. 'gr', '') end
end

-- A group that got a ready job joins the ring if it was idle.
local function wakeGroup(base, g)
  local gk = groupHashKey(base, g)
  if redis.call('HGET', gk, 'st') then return end
  enableGroups(base)
  redis.call('HSET', gk, 'st', 'r')
  redis.call('RPUSH', base .. 'gr', g)
  redis.call('ZADD', base .. 'gs', 0, g)
  signalWork(base .. 'marker')
end

-- The state of a ready job by priority (grouped or not).
local function readyState(priority)
  if priority > 0 then return 'prioritized' end
  return 'waiting'
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

-- Whether a group record `f` (HMGET c, lm, ms, w) holds settings of its own.
local function hasGroupSettings(c, lm, ms, w)
  return c ~= false or lm ~= false or ms ~= false or w ~= false
end

-- A group with no backlog: idle, and forgotten when nothing else holds it (no active job, no
-- setting of its own, not paused); its rate-limit window, if any, expires by itself.
local function idleGroup(base, g, gk, active, hasSettings)
  if active == 0 and not hasSettings then
    redis.call('DEL', gk)
    redis.call('ZREM', base .. 'gs', g)
  else
    redis.call('HSET', gk, 'a', active)
    redis.call('HDEL', gk, 'st', 'q')
  end
end

-- `n` jobs of group `g` left active (finished, retried, delayed, rescued...): frees their slots.
-- A group parked at its concurrency limit goes back to the ring if it has a backlog.
local function releaseGroup(base, g, n)
  local gk = groupHashKey(base, g)
  local f = redis.call('HMGET', gk, 'a', 'st', 'c', 'lm', 'ms', 'w')
  local active = math.max((tonumber(f[1]) or 0) - n, 0)
  if f[2] == 'c' then
    if redis.call('ZCARD', groupQueueKey(base, g)) > 0 then
      redis.call('HSET', gk, 'a', active, 'st', 'r')
      redis.call('RPUSH', base .. 'gr', g)
      signalWork(base .. 'marker')
    else
      idleGroup(base, g, gk, active, hasGroupSettings(f[3], f[4], f[5], f[6]))
    end
  elseif not f[2] then
    idleGroup(base, g, gk, active, hasGroupSettings(f[3], f[4], f[5], f[6]))
  else
    redis.call('HSET', gk, 'a', active)
  end
end

-- Collects the groups of jobs leaving active in one call, released together by flushReleases.
local function noteRelease(rel, g)
  if not g then return end
  if not rel[g] then
    rel[g] = 0
    rel[#rel + 1] = g
  end
  rel[g] = rel[g] + 1
end

local function flushReleases(base, rel)
  for i = 1, #rel do releaseGroup(base, rel[i], rel[rel[i]]) end
end

-- Takes a ready job of group `g` out of its group queue (remove, cancel, priority change).
local function unqueueGrouped(base, id, g)
  redis.call('ZREM', groupQueueKey(base, g), id)
end
