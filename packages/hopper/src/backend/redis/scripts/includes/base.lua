--[[ base: helpers every script needs: the clock, events, job keys, job data, ready structures.
  Scripts receive `base` (the queue's key prefix, ending with ':'); a job's keys are
  base .. 'j:' .. id (hash), base .. 'd:' .. id (large data), base .. 'l:' .. id (log list):
  separate namespaces, since custom ids may contain ':'. All share the queue's {hash tag},
  so they live in one Redis Cluster slot. ]]
--@include chunked

-- Redis 7.0 formats every number passed to redis.call with snprintf('%.17g'), and Lua formats a
-- number joined to a string with '%.14g': ~0.25 µs each, more than most commands cost. Hot paths
-- pass strings, made by these two.

-- An integer as a string: string.format('%d') takes half the time of tostring's '%.14g'
-- (measured 0.16 against 0.32 µs); a non-integer keeps tostring's form.
local function intStr(n)
  if n % 1 == 0 then return string.format('%d', n) end
  return tostring(n)
end

-- Small non-negative integers as strings, each made once (kept up to 4,096): counts, attempts,
-- token suffixes.
local INT_STRINGS = {}
local function istr(n)
  local s = INT_STRINGS[n]
  if s then return s end
  s = intStr(n)
  if n >= 0 and n <= 4096 and n % 1 == 0 then INT_STRINGS[n] = s end
  return s
end

-- One clock: a test passes `now` (ms); production passes '' and Redis TIME decides.
local function nowMs(arg)
  if arg ~= nil and arg ~= '' then return tonumber(arg) end
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

local function jobKey(base, id)
  return base .. 'j:' .. id
end

local function dataKey(base, id)
  return base .. 'd:' .. id
end

local function logsKey(base, id)
  return base .. 'l:' .. id
end

-- Hash of a job's durable steps: step key -> JSON record (see recordStep).
local function stepsKey(base, id)
  return base .. 'st:' .. id
end

-- Events go to a capped stream in the same script that changes state. The cap lives in the
-- queue's meta hash (set by the Queue), read once per script call.
-- The events cap from the meta hash's `maxEvents` value (nil: the default).
-- A string (a number would be formatted again at every XADD, see istr): the stored value when it
-- is a plain integer, else the number it reads as (or the default) once formatted.
local function eventsCapOf(value)
  if value and string.match(value, '^%d+$') then return value end
  return tostring(tonumber(value) or 10000)
end

local function eventsCap(metaKey)
  return eventsCapOf(redis.call('HGET', metaKey, 'maxEvents'))
end

-- Key layout 2 (meta `v`, written once by initQueue when the queue is created): every job that may
-- have keys besides its hash (large data, logs, steps, output, a parent's dependency records) says
-- so with field `sx`, set by every script that creates one. A job without `sx` in such a queue is
-- deleted with one key instead of nine (removedKeys). A queue created by an earlier version
-- (layout 1) keeps deleting every possible key: its older jobs carry no mark.
local LEAN_LAYOUT = 2

-- The events cap, whether the queue is paused, and its limits, in one read (for the claiming
-- scripts): groups on (gm), rate limit (lmax per ldur ms; weighted by the jobs' `cost` when lwt
-- is set), global concurrency (gcc), the key layout (qs.lean: at least LEAN_LAYOUT), and the group
-- defaults: concurrency (gcon), rate limit (glm per gld ms; weighted by the jobs' `cost` when glw is
-- '1'), weight (gwt).
local function queueSettings(metaKey)
  local m = redis.call('HMGET', metaKey, 'maxEvents', 'paused', 'gm', 'lmax', 'ldur', 'gcc', 'lwt', 'v')
  local qs = { groups = m[3] ~= false, lmax = tonumber(m[4]), ldur = tonumber(m[5]), gcc = tonumber(m[6]), lwt = m[7] ~= false,
    lean = (tonumber(m[8]) or 0) >= LEAN_LAYOUT }
  if qs.groups then
    -- Group defaults: read only by queues that use groups.
    local d = redis.call('HMGET', metaKey, 'gcon', 'glm', 'gld', 'gwt', 'glw')
    qs.gcon, qs.glm, qs.gld, qs.gwt = tonumber(d[1]), tonumber(d[2]), tonumber(d[3]), tonumber(d[4])
    qs.glw = d[5] == '1'
  end
  return eventsCapOf(m[1]), m[2] ~= false, qs
end

local function emit(eventsKey, cap, event, ...)
  redis.call('XADD', eventsKey, 'MAXLEN', '~', cap, '*', 'event', event, ...)
end

-- The hot operations (add, claim, complete) record the events of a whole call in one stream
-- entry: `ids` is a JSON array of job ids, and other per-job values are JSON arrays in the same
-- order. One XADD per call instead of one per job; QueueEvents emits them one job at a time.
local function emitBatch(eventsKey, cap, event, ids, ...)
  if #ids == 0 then return end
  redis.call('XADD', eventsKey, 'MAXLEN', '~', cap, '*', 'event', event, 'ids', cjson.encode(ids), ...)
end

-- Redis keeps a hash compact (listpack) only while every value is <= 64 bytes (and it has at
-- most 128 entries); one longer value turns it into a real hash table, several times larger.
-- So job data up to 64 bytes is one field `d`; up to DATA_CHUNKED_MAX it is split into fields
-- d1..dN of at most 64 bytes (`dc` = N) that keep the hash compact; larger data gets a string
-- key of its own.
local DATA_CHUNK = 64
local DATA_CHUNKED_MAX = 1024

-- Appends the field/value pairs that store `data` to `fields`; writes large data to its own key.
local function dataFields(base, id, data, fields)
  local n = #data
  if n <= DATA_CHUNK then
    fields[#fields + 1] = 'd'; fields[#fields + 1] = data
  elseif n <= DATA_CHUNKED_MAX then
    -- Cut only between UTF-8 characters (never before a continuation byte 0x80-0xBF), so each
    -- chunk is valid text on its own and readers may decode chunks separately.
    local pos, count = 1, 0
    while pos <= n do
      local stop = math.min(pos + DATA_CHUNK - 1, n)
      while stop < n and stop > pos do
        local nextByte = string.byte(data, stop + 1)
        if nextByte < 128 or nextByte >= 192 then break end
        stop = stop - 1
      end
      count = count + 1
      fields[#fields + 1] = 'd' .. count
      fields[#fields + 1] = string.sub(data, pos, stop)
      pos = stop + 1
    end
    fields[#fields + 1] = 'dc'; fields[#fields + 1] = count
  else
    redis.call('SET', dataKey(base, id), data)
    fields[#fields + 1] = 'sx'; fields[#fields + 1] = '1'
  end
end

-- Removes a job's data wherever it is stored (before replacing it).
local function clearData(base, id, jk)
  local count = tonumber(redis.call('HGET', jk, 'dc')) or 0
  local names = { 'd', 'dc' }
  for i = 1, count do names[#names + 1] = 'd' .. i end
  chunked('HDEL', jk, names)
  redis.call('DEL', dataKey(base, id))
end

local function writeData(base, id, jk, data)
  local fields = {}
  dataFields(base, id, data, fields)
  if #fields > 0 then chunked('HSET', jk, fields, 2) end
end

-- Reads a job's data, given the values of its `d` and `dc` fields.
local function readData(base, id, jk, inline, chunks)
  if inline then return inline end
  if chunks then
    local names = {}
    for i = 1, tonumber(chunks) do names[i] = 'd' .. i end
    return table.concat(chunked('HMGET', jk, names))
  end
  return redis.call('GET', dataKey(base, id)) or 'null'
end

-- Every key of a job: its hash, large data, logs, steps, output stream, and (as a parent) its dependency
-- records: pending children, their results, their failures and the failures it ignored (see includes/flow).
local function jobKeys(base, id, into)
  into[#into + 1] = base .. 'j:' .. id
  into[#into + 1] = base .. 'd:' .. id
  into[#into + 1] = base .. 'l:' .. id
  into[#into + 1] = base .. 'st:' .. id
  into[#into + 1] = base .. 'dp:' .. id
  into[#into + 1] = base .. 'pr:' .. id
  into[#into + 1] = base .. 'fc:' .. id
  into[#into + 1] = base .. 'ig:' .. id
  into[#into + 1] = base .. 'o:' .. id
  return into
end

-- The keys to delete for job `id` (appended to `into`): its hash alone when `lean` (the queue's
-- layout flags side keys) and `sx` is false (the job's hash has no `sx` mark), else every key.
-- `sx` nil (not read) always means every key.
local function removedKeys(base, id, into, lean, sx)
  if lean and sx == false then
    into[#into + 1] = jobKey(base, id)
    return into
  end
  return jobKeys(base, id, into)
end

local function deleteJob(base, id)
  chunked('DEL', nil, jobKeys(base, id, {}))
end

-- Wakes one idle worker blocked on the marker list. At most one marker is kept: a woken
-- worker that leaves work behind pushes it again (see claimJobs), waking the next one.
local function signalWork(markerKey)
  if redis.call('LLEN', markerKey) == 0 then
    redis.call('RPUSH', markerKey, '1')
  end
end

-- A worker's wait claims numbered up to this key's value are void (releaseOrphans writes it, the
-- claim reads it: see claim.lua's `waitWorker`). It outlives any connection Redis has yet to see
-- closed by far; past it, a claim that still ran would leave its jobs to the stall rescue.
local WAIT_CLAIM_VOID_MS = 600000
local function waitClaimVoidKey(base, workerId)
  return base .. 'wv:' .. workerId
end

-- Priority order: lower priority first, FIFO within a priority. The score packs the priority
-- (<= 2^21) above a 32-bit counter, which fits a double's 53-bit mantissa exactly.
local PRIO_SHIFT = 4294967296

local function pushPrioritized(k, id, priority)
  local counter = redis.call('INCR', k.prioCounter) % PRIO_SHIFT
  redis.call('ZADD', k.prio, priority * PRIO_SHIFT + counter, id)
end

--@include groups

-- Puts a job in the ready structure for its priority (its group's queue for a grouped job) and
-- records the state on the job. `front` puts a waiting job at the head (rescued jobs run next);
-- `lifo` likewise for adds. `group`: the job's group id, false for none, nil to read it from the job.
local function pushReady(k, jk, id, priority, front, group)
  if group == nil then group = redis.call('HGET', jk, 'g') end
  if group then return groups().pushGrouped(string.sub(jk, 1, #jk - #id - 2), jk, id, group, priority, front) end
  if priority > 0 then
    -- In front: first within its priority (a rescued or rate-limited job keeps its turn).
    if front then redis.call('ZADD', k.prio, priority * PRIO_SHIFT, id) else pushPrioritized(k, id, priority) end
    redis.call('HSET', jk, 's', 'prioritized')
    return 'prioritized'
  end
  if front then
    redis.call('LPUSH', k.wait, id)
  else
    redis.call('RPUSH', k.wait, id)
  end
  redis.call('HSET', jk, 's', 'waiting')
  return 'waiting'
end

-- Schedules a delayed job; wakes idle workers if it is now the earliest, so they re-arm their timer.
local function pushDelayed(k, jk, id, due)
  redis.call('ZADD', k.delayed, due, id)
  redis.call('HSET', jk, 's', 'delayed')
  local first = redis.call('ZRANGE', k.delayed, '0', '0')
  if first[1] == id then signalWork(k.marker) end
end

local function isPaused(metaKey)
  return redis.call('HEXISTS', metaKey, 'paused') == 1
end

-- deduplication.keepLastIfActive: an add deduplicated onto an active job is kept in dn:<dedupId>
-- (fields n name, d data, o opts, c custom id, p priority, dl delay, lf lifo; the last add wins)
-- and the active job is marked `dk`. When that job finishes for good, the kept add becomes a job,
-- holding the deduplication id in its turn. Only a marked job pays for this.
local function addKeptJob(base, dedupId, now)
  local nk = base .. 'dn:' .. dedupId
  local s = redis.call('HMGET', nk, 'n', 'd', 'o', 'c', 'p', 'dl', 'lf')
  if not s[1] then return end
  redis.call('DEL', nk)
  local k = { meta = base .. 'meta', wait = base .. 'wait', prio = base .. 'prio', prioCounter = base .. 'pc',
    delayed = base .. 'delayed', marker = base .. 'marker', events = base .. 'events' }
  local cap = eventsCap(k.meta)
  local id = s[4]
  if id and id ~= '' then
    -- A custom id taken meanwhile: as for any add of an existing id, nothing is created.
    if redis.call('EXISTS', jobKey(base, id)) == 1 then
      emit(k.events, cap, 'duplicated', 'jobId', id)
      return
    end
  else
    id = intStr(redis.call('INCR', base .. 'id'))
  end
  local jk = jobKey(base, id)
  local opts, priority, delay = s[3] or '', tonumber(s[5]) or 0, tonumber(s[6]) or 0
  local group = groupOfOpts(opts)
  local fields = { 'n', s[1], 't', now, 'de', dedupId }
  if group then fields[#fields + 1] = 'g'; fields[#fields + 1] = group end
  if opts ~= '' then fields[#fields + 1] = 'o'; fields[#fields + 1] = opts end
  if priority > 0 then fields[#fields + 1] = 'p'; fields[#fields + 1] = priority end
  dataFields(base, id, s[2] or '{}', fields)
  redis.call('SET', base .. 'de:' .. dedupId, id)
  local state, due = 'delayed', 0
  if delay > 0 then
    fields[#fields + 1] = 'dl'; fields[#fields + 1] = delay
    chunked('HSET', jk, fields, 2)
    due = now + delay
    pushDelayed(k, jk, id, due)
  else
    chunked('HSET', jk, fields, 2)
    state = pushReady(k, jk, id, priority, s[7] == '1', group or false)
    signalWork(k.marker)
  end
  emitBatch(k.events, cap, 'added', { id }, 'names', cjson.encode({ s[1] }), 'states', cjson.encode({ state }),
    'delays', cjson.encode({ due }))
end

-- For the scripts that end a job for good (or remove it): frees the job's deduplication id
-- (recorded as `de` in simple mode) while it still points to the job, then adds the add kept
-- for it (keepLastIfActive), if any.
local function releaseDedup(base, jk, id, now)
  local f = redis.call('HMGET', jk, 'de', 'dk')
  if f[1] then
    local dk = base .. 'de:' .. f[1]
    if redis.call('GET', dk) == id then
      redis.call('DEL', dk)
      if f[2] then addKeptJob(base, f[1], now) end
    end
  end
end
