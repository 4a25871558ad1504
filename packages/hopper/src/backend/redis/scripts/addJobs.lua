--[[ addJobs: adds a batch of jobs atomically (one call of add or addBulk).
  KEYS: meta, id, wait, prio, prioCounter, delayed, events, marker, requests
  ARGV: now, base, seq, keep, costs, budget, allOrNothing, ...jobs
    jobs: 12 values per job: name, data, opts ('' = none), customId ('' = auto), priority, delay,
      lifo (0/1), timestamp (0 = now), dedupId ('' = none), dedupTtl (ms, 0 = until the job
      finishes), dedupExtend (0/1), dedupFlags ('' or letters: r = replace, k = keepLastIfActive)
    seq: this producer's request number ('' = no dedupe). A re-sent call (ioredis resends a
      command whose reply was lost) finds its seq in `requests` and returns the first result,
      so it is applied once. `keep` is how many recent requests a producer remembers.
    costs: '' when no job of the call has a `cost` option, else a JSON array of each job's cost
      (-1 = none). A job whose cost is above the queue's weighted rate limit (meta lmax with lwt),
      or above its group's weighted limiter (its own lm/ld with lwt, else the default glm/gld with
      glw), could never start: refused.
    budget: '' or JSON { l = limit, w = window ms, t = [tenant per job, '' = none] }: each new job
      with a cost > 0 and a tenant is charged to the tenant's sliding window bu:<tenant> (sum in
      bs:<tenant>, includes/window) and records `bt` tenant, `bc` cost on the job; a job that would
      take its tenant past the limit is refused.
    allOrNothing: '1' (addBulk): a refused job refuses the call: { now, epoch, -2, kind, job index
      (from 1), detail }; '0' (coalesced queue.add calls): only the job is refused: its flag is 3
      (budget; its id slot holds the tenant's use), 4 (weighted limit; id slot 'max:durationMs') or
      5 (its group's weighted limit; id slot 'max:durationMs').
  Returns: { now, epoch ('' if the queue's meta is gone), id1, flag1, id2, flag2, ... } where flag
    is 0 for a new job, 1 when a job with that custom id already existed (nothing written,
    `duplicated` event), 2 when deduplicated onto an existing job (`deduplicated` event; with
    replace, that delayed job took the new data and delay; with keepLastIfActive onto an active job,
    the add is kept in dn:<dedupId> and added when that job finishes, see includes/base).
  A deduplicated add is counted (includes/counters) under the added job's name. The new jobs'
  names are admitted to the metrics' names (includes/counters) on first sight.
  A job with a ttl records its deduplication id as `dt` (freed on removal, not on finishing).
  A grouped job (opts.group.id) goes to its group's queue; when an add would take a group past its
  backlog cap (maxSize), nothing is written and the call returns { now, epoch, -1, group, max, size }.
  Codes: none; input is validated before the call. ]]
--@include base
--@include requests
--@include counters
--@include window

local now = nowMs(argv.now)
local nowS = intStr(now)
local base = argv.base

local previous = previousResult(k.requests, argv.seq)
if previous then return previous end

-- The events cap and the queue's epoch in one read.
local meta = redis.call('HMGET', k.meta, 'maxEvents', 'epoch')
local cap = eventsCapOf(meta[1])
local result = { now, meta[2] or '' }

-- The call's new jobs, for one RPUSH and one `added` event at the end.
local fifo = {}
local added, names, states, dues = {}, {}, {}, {}
local plain = true
local anyReady = false

-- Writes a new job `id`: one HSET with every field (each redis.call costs more than the fields it writes).
local function createJob(id, name, data, opts, priority, delay, lifo, timestamp, extra, group)
  local jk = jobKey(base, id)
  local fields = { 'n', name, 't', timestamp }
  if group then fields[#fields + 1] = 'g'; fields[#fields + 1] = group end
  if opts ~= '' then fields[#fields + 1] = 'o'; fields[#fields + 1] = opts end
  if priority > 0 then fields[#fields + 1] = 'p'; fields[#fields + 1] = intStr(priority) end
  if extra then fields[#fields + 1] = extra[1]; fields[#fields + 1] = extra[2] end
  dataFields(base, id, data, fields)
  local state
  local due = 0
  if delay > 0 then
    fields[#fields + 1] = 'dl'; fields[#fields + 1] = intStr(delay)
    fields[#fields + 1] = 's'; fields[#fields + 1] = 'delayed'
    chunked('HSET', jk, fields, 2)
    due = now + delay
    pushDelayed(k, jk, id, due)
    state = 'delayed'
  else
    anyReady = true
    if group then
      state = readyState(priority)
      groups().queueGrouped(base, id, group, priority, lifo)
    elseif priority > 0 then
      state = 'prioritized'
      pushPrioritized(k, id, priority)
    else
      state = 'waiting'
      if lifo then redis.call('LPUSH', k.wait, id) else fifo[#fifo + 1] = id end
    end
    fields[#fields + 1] = 's'; fields[#fields + 1] = state
    chunked('HSET', jk, fields, 2)
  end
  added[#added + 1] = id
  names[#names + 1] = name
  states[#states + 1] = state
  dues[#dues + 1] = due
  if state ~= 'waiting' then plain = false end
end

-- Read phase: every job's fate is decided before the first write (Redis does not roll back a
-- script that errors). plan[n] = { i = ARGV index, kind = 'new' | 'dup' | 'dedup', ... }; a job
-- deduplicated onto a job of this same call points to it (ref), whose id is known once written.
local plan = {}
local madeHere, dedupHere = {}, {}
-- How many new jobs take an automatic id: one INCRBY reserves them all (ids in add order).
local autoIds = 0
-- Costs: the queue's weighted limit and the tenants' budget windows, read (not written) here.
local costs = argv.costs ~= '' and cjson.decode(argv.costs) or nil
local budget = argv.budget ~= '' and cjson.decode(argv.budget) or nil
local wmax, wdur = nil, nil
if costs then
  local m = redis.call('HMGET', k.meta, 'lmax', 'ldur', 'lwt')
  if m[3] then wmax, wdur = tonumber(m[1]), m[2] end
end
local tenants = {}
local function tenantWindow(t)
  local tw = tenants[t]
  if not tw then
    local zkey, skey = base .. 'bu:' .. t, base .. 'bs:' .. t
    local use, expired, freed = windowUse(zkey, skey, now, budget.w)
    tw = { zkey = zkey, skey = skey, use = use, expired = expired, freed = freed, taken = 0 }
    tenants[t] = tw
  end
  return tw
end
-- Group `g`'s weighted limit { max, duration } (its own limiter, else the queue's default), or false.
local groupLimits = {}
local function groupWeightedLimit(g)
  local gl = groupLimits[g]
  if gl == nil then
    local f = redis.call('HMGET', groups().groupHashKey(base, g), 'lm', 'ld', 'lwt')
    if not f[1] then f = redis.call('HMGET', k.meta, 'glm', 'gld', 'glw') end
    gl = f[1] and f[3] == '1' and { tonumber(f[1]), f[2] } or false
    groupLimits[g] = gl
  end
  return gl
end
-- Whether new job number `j` (from 1, of group `g` or nil) is refused: 3 (budget, detail: the
-- tenant's use), 4 (above the weighted limit, detail 'max:durationMs') or 5 (above its group's);
-- else reserves its cost in its tenant's window.
local function refusal(j, g)
  local c = costs and costs[j] or -1
  if c < 0 then return nil end
  if wmax and c > wmax then return 4, wmax .. ':' .. wdur end
  local gl = g and groupWeightedLimit(g)
  if gl and c > gl[1] then return 5, gl[1] .. ':' .. gl[2] end
  local t = budget and budget.t[j] or ''
  if t ~= '' and c > 0 then
    local tw = tenantWindow(t)
    if tw.use + tw.taken + c > budget.l then return 3, tostring(tw.use + tw.taken) end
    tw.taken = tw.taken + c
  end
  return nil
end
for i = REST, #ARGV, 12 do
  local customId, dedupId = ARGV[i + 3], ARGV[i + 8]
  local entry = { i = i, delay = tonumber(ARGV[i + 5]), data = ARGV[i + 1], opts = ARGV[i + 2] }
  entry.group, entry.own = groupOfOpts(entry.opts)
  local existing = false
  if dedupId ~= '' then
    existing = dedupHere[dedupId] or redis.call('GET', base .. 'de:' .. dedupId)
  end
  if existing then
    entry.kind = 'dedup'
    if type(existing) == 'table' then
      entry.ref = existing
      -- Debounce with replace onto a job of this call: that job, still delayed, takes the new
      -- data, options and delay.
      if string.find(ARGV[i + 11], 'r', 1, true) and existing.delay > 0 then
        existing.data, existing.opts, existing.delay = entry.data, entry.opts, entry.delay
        existing.group, existing.own = entry.group, entry.own
      end
    else
      entry.id = existing
      local flags = ARGV[i + 11]
      if flags ~= '' then
        local state = redis.call('HGET', jobKey(base, existing), 's')
        entry.replace = state == 'delayed' and string.find(flags, 'r', 1, true) ~= nil
        entry.keep = state == 'active' and string.find(flags, 'k', 1, true) ~= nil
      end
    end
  elseif customId ~= '' and (madeHere[customId] or redis.call('EXISTS', jobKey(base, customId)) == 1) then
    entry.kind = 'dup'
    entry.id = customId
  else
    local j = (i - REST) / 12 + 1
    local code, detail = refusal(j, entry.group)
    if code and argv.allOrNothing == '1' then return { now, result[2], -2, code, j, detail } end
    if code then
      entry.kind = 'refused'
      entry.code, entry.detail = code, detail
    else
      entry.kind = 'new'
      entry.j = j
      if customId == '' then autoIds = autoIds + 1 end
      if customId ~= '' then madeHere[customId] = true end
      if dedupId ~= '' then dedupHere[dedupId] = entry end
    end
  end
  plan[#plan + 1] = entry
end

-- Groups: the backlog caps, checked against the call's new ready jobs before anything is written.
local order = {}
for n = 1, #plan do
  local g = plan[n].group
  if g then groups().noteGroupAdd(order, g, plan[n].own) end
end
local capped = #order > 0 and groups().groupCaps(base, order)
if capped then
  local counts = {}
  for n = 1, #plan do
    local e = plan[n]
    if e.kind == 'new' and e.group and capped[e.group] and e.delay == 0 then counts[e.group] = (counts[e.group] or 0) + 1 end
  end
  local g, max, size = groups().overCap(base, order, capped, counts)
  if g then return { now, result[2], -1, g, max, size } end
end

-- Debounce with replace: the existing job, still delayed, takes the new data, options and delay.
local function replaceDelayed(id, data, opts, delay)
  local jk = jobKey(base, id)
  clearData(base, id, jk)
  writeData(base, id, jk, data)
  if opts ~= '' then redis.call('HSET', jk, 'o', opts) else redis.call('HDEL', jk, 'o') end
  redis.call('HSET', jk, 'dl', delay)
  pushDelayed(k, jk, id, now + delay)
end

-- keepLastIfActive: keeps add `i` (the last one wins) for when active job `id` finishes; the
-- job is marked, and its deduplication id no longer expires while it runs.
local function keepForActive(id, i, dedupId, e)
  local nk = base .. 'dn:' .. dedupId
  redis.call('DEL', nk)
  redis.call('HSET', nk, 'n', ARGV[i], 'd', e.data, 'o', e.opts, 'c', ARGV[i + 3], 'p', ARGV[i + 4], 'dl', e.delay,
    'lf', ARGV[i + 6])
  redis.call('PERSIST', base .. 'de:' .. dedupId)
  redis.call('HSET', jobKey(base, id), 'de', dedupId, 'dk', '1')
end

-- Write phase. The call's automatic ids first: one INCRBY instead of one INCR per job.
local lastId = 0
if autoIds > 0 then lastId = redis.call('INCRBY', k.id, autoIds) - autoIds end
for _, tw in pairs(tenants) do windowTrim(tw.zkey, tw.skey, tw.expired, tw.freed) end
for n = 1, #plan do
  local e = plan[n]
  local i = e.i
  local dedupId, dedupTtl = ARGV[i + 8], tonumber(ARGV[i + 9])
  local flag = 0
  if e.kind == 'refused' then
    flag = e.code
    e.id = e.detail
  elseif e.kind == 'dedup' then
    flag = 2
    if e.ref then e.id = e.ref.id end
    if e.replace then replaceDelayed(e.id, e.data, e.opts, e.delay) end
    if e.keep then keepForActive(e.id, i, dedupId, e) end
    if ARGV[i + 10] == '1' and dedupTtl > 0 and not e.keep then redis.call('PEXPIRE', base .. 'de:' .. dedupId, dedupTtl) end
    countOutcome('deduplicated', ARGV[i])
    emit(k.events, cap, 'deduplicated', 'jobId', e.id, 'deduplicationId', dedupId, 'deduplicatedJobId', ARGV[i + 3])
  elseif e.kind == 'dup' then
    flag = 1
    emit(k.events, cap, 'duplicated', 'jobId', e.id)
  else
    local id = ARGV[i + 3]
    if id == '' then
      lastId = lastId + 1
      id = intStr(lastId)
    end
    e.id = id
    local extra = nil
    if dedupId ~= '' then
      local dk = base .. 'de:' .. dedupId
      if dedupTtl > 0 then
        redis.call('SET', dk, id, 'PX', dedupTtl)
        extra = { 'dt', dedupId }
      else
        -- Simple mode: the key lives until the job finishes; the job knows it, to release it.
        redis.call('SET', dk, id)
        extra = { 'de', dedupId }
      end
    end
    -- The timestamp as a string (see istr): the caller's when it sent one, else the call's `now`.
    local timestamp = ARGV[i + 7]
    if tonumber(timestamp) == 0 then
      timestamp = nowS
    elseif not string.match(timestamp, '^%d+$') then
      timestamp = intStr(tonumber(timestamp))
    end
    createJob(id, ARGV[i], e.data, e.opts, tonumber(ARGV[i + 4]), e.delay, ARGV[i + 6] == '1', timestamp, extra, e.group)
    local t = budget and budget.t[e.j] or ''
    local c = costs and costs[e.j] or -1
    if t ~= '' and c > 0 then
      -- Charged to its tenant; job.reportCost(actual) replaces the entry (reportCost.lua).
      local tw = tenants[t]
      local _, charged = windowAdd(tw.zkey, tw.skey, now, budget.w, id, c)
      redis.call('HSET', jobKey(base, id), 'bt', t, 'bc', charged)
    end
  end
  result[#result + 1] = e.id
  result[#result + 1] = flag
end

if #fifo > 0 then chunked('RPUSH', k.wait, fifo) end
if #added > 0 then
  if anyReady then signalWork(k.marker) end
  -- One event for the call; states and due times only when some job is not simply waiting.
  if plain then
    emitBatch(k.events, cap, 'added', added, 'names', cjson.encode(names))
  else
    emitBatch(k.events, cap, 'added', added, 'names', cjson.encode(names), 'states', cjson.encode(states), 'delays', cjson.encode(dues))
  end
end

admitNames(base, names)
flushCounts(base)
recordResult(k.requests, argv.seq, argv.keep, result)
return result
