--[[ addJobs: adds a batch of jobs atomically (one call of add or addBulk).
  KEYS: meta, id, wait, prio, prioCounter, delayed, events, marker, requests
  ARGV: now, base, seq, keep, ...jobs
    jobs: 12 values per job: name, data, opts ('' = none), customId ('' = auto), priority, delay,
      lifo (0/1), timestamp (0 = now), dedupId ('' = none), dedupTtl (ms, 0 = until the job
      finishes), dedupExtend (0/1), dedupReplace (0/1)
    seq: this producer's request number ('' = no dedupe). A re-sent call (ioredis resends a
      command whose reply was lost) finds its seq in `requests` and returns the first result,
      so it is applied once. `keep` is how many recent requests a producer remembers.
  Returns: { now, epoch ('' if the queue's meta is gone), id1, flag1, id2, flag2, ... } where flag
    is 0 for a new job, 1 when a job with that custom id already existed (nothing written,
    `duplicated` event), 2 when deduplicated onto an existing job (`deduplicated` event; with
    replace, that delayed job took the new data and delay).
  A grouped job (opts.group.id) goes to its group's queue; when an add would take a group past its
  backlog cap (maxSize), nothing is written and the call returns { now, epoch, -1, group, max, size }.
  Codes: none; input is validated before the call. ]]
--@include base
--@include requests

local now = nowMs(argv.now)
local base = argv.base

local previous = previousResult(k.requests, argv.seq)
if previous then return previous end

local cap = eventsCap(k.meta)
local result = { now, redis.call('HGET', k.meta, 'epoch') or '' }

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
  if priority > 0 then fields[#fields + 1] = 'p'; fields[#fields + 1] = priority end
  if extra then fields[#fields + 1] = extra[1]; fields[#fields + 1] = extra[2] end
  dataFields(base, id, data, fields)
  local state
  local due = 0
  if delay > 0 then
    fields[#fields + 1] = 'dl'; fields[#fields + 1] = delay
    fields[#fields + 1] = 's'; fields[#fields + 1] = 'delayed'
    redis.call('HSET', jk, unpack(fields))
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
    redis.call('HSET', jk, unpack(fields))
  end
  added[#added + 1] = id
  names[#names + 1] = name
  states[#states + 1] = state
  dues[#dues + 1] = due
  if state ~= 'waiting' then plain = false end
end

-- Debounce with replace: the existing job, still delayed, takes the new data, options and delay.
local function replaceDelayed(id, data, opts, delay)
  local jk = jobKey(base, id)
  if redis.call('HGET', jk, 's') ~= 'delayed' then return end
  clearData(base, id, jk)
  writeData(base, id, jk, data)
  if opts ~= '' then redis.call('HSET', jk, 'o', opts) else redis.call('HDEL', jk, 'o') end
  redis.call('HSET', jk, 'dl', delay)
  pushDelayed(k, jk, id, now + delay)
end

-- Groups: each job's group, and the backlog caps checked before anything is written (new
-- ready jobs count; duplicates and delayed jobs do not).
local groupOf, order = {}, {}
for i = REST, #ARGV, 12 do
  local g, own = groupOfOpts(ARGV[i + 2])
  if g then
    groupOf[i] = g
    groups().noteGroupAdd(order, g, own)
  end
end
local capped = #order > 0 and groups().groupCaps(base, order)
if capped then
  local counts = {}
  for i = REST, #ARGV, 12 do
    local g = groupOf[i]
    if g and capped[g] and tonumber(ARGV[i + 5]) == 0 then
      local customId, dedupId = ARGV[i + 3], ARGV[i + 8]
      local exists = (customId ~= '' and redis.call('EXISTS', jobKey(base, customId)) == 1)
        or (dedupId ~= '' and redis.call('EXISTS', base .. 'de:' .. dedupId) == 1)
      if not exists then counts[g] = (counts[g] or 0) + 1 end
    end
  end
  local g, max, size = groups().overCap(base, order, capped, counts)
  if g then return { now, result[2], -1, g, max, size } end
end

for i = REST, #ARGV, 12 do
  local name, data, opts, customId = ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3]
  local priority, delay, lifo = tonumber(ARGV[i + 4]), tonumber(ARGV[i + 5]), ARGV[i + 6] == '1'
  local timestamp = tonumber(ARGV[i + 7])
  if timestamp == 0 then timestamp = now end
  local dedupId, dedupTtl = ARGV[i + 8], tonumber(ARGV[i + 9])
  local id = customId
  local flag = 0
  local existing = false
  if dedupId ~= '' then existing = redis.call('GET', base .. 'de:' .. dedupId) end
  if existing then
    flag = 2
    id = existing
    if ARGV[i + 11] == '1' then replaceDelayed(existing, data, opts, delay) end
    if ARGV[i + 10] == '1' and dedupTtl > 0 then redis.call('PEXPIRE', base .. 'de:' .. dedupId, dedupTtl) end
    emit(k.events, cap, 'deduplicated', 'jobId', existing, 'deduplicationId', dedupId, 'deduplicatedJobId', customId)
  elseif id ~= '' and redis.call('EXISTS', jobKey(base, id)) == 1 then
    flag = 1
    emit(k.events, cap, 'duplicated', 'jobId', id)
  else
    if id == '' then id = tostring(redis.call('INCR', k.id)) end
    local extra = nil
    if dedupId ~= '' then
      local dk = base .. 'de:' .. dedupId
      if dedupTtl > 0 then
        redis.call('SET', dk, id, 'PX', dedupTtl)
      else
        -- Simple mode: the key lives until the job finishes; the job knows it, to release it.
        redis.call('SET', dk, id)
        extra = { 'de', dedupId }
      end
    end
    createJob(id, name, data, opts, priority, delay, lifo, timestamp, extra, groupOf[i])
  end
  result[#result + 1] = id
  result[#result + 1] = flag
end

if #fifo > 0 then redis.call('RPUSH', k.wait, unpack(fifo)) end
if #added > 0 then
  if anyReady then signalWork(k.marker) end
  -- One event for the call; states and due times only when some job is not simply waiting.
  if plain then
    emitBatch(k.events, cap, 'added', added, 'names', cjson.encode(names))
  else
    emitBatch(k.events, cap, 'added', added, 'names', cjson.encode(names), 'states', cjson.encode(states), 'delays', cjson.encode(dues))
  end
end

recordResult(k.requests, argv.seq, argv.keep, result)
return result
