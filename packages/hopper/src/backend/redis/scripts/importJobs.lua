--[[ importJobs: writes a batch of jobs moved here from another queue system (`hopper migrate`,
  from BullMQ) with their own ids, each in the state it had there: waiting (in the given order,
  or at the head), prioritized (in the given order within its priority), delayed (due at the given
  ms), waiting-children (with its pending children and its children's recorded outcomes),
  completed or failed (return value, failure reason, stack traces), keeping attempts, progress,
  logs, its deduplication id (with the ttl it had left) and its link to a parent already here.
  A job whose id exists here is left as it is and reported: the copy already here wins (a re-run
  after a crash between writing here and removing there finds it).
  KEYS: meta, wait, prio, prioCounter, delayed, completed, failed, waitingChildren, events, marker
  ARGV: now, base, ...jobs
    jobs: one JSON object per job (backend/redis/redis-import.ts writes them): i id, n name,
      d data, o options ('' none), t timestamp, s state, p priority, dl delay, du due (delayed),
      fr_ 1 = at the head of waiting, am, as, sc attempts made / started / stalls, po, fo
      processedOn / finishedOn, rv return value, fr failed reason, st stack traces (JSON array),
      pg progress, pb processedBy, lg logs (array, oldest first), de { i id, t ttl ms (0: until
      the job finishes) }, pl { b parent base, i parent id, p policy letter }, ch { p pending
      child keys, c [key, return value] pairs, f [key, reason] pairs, g [key, reason] ignored }.
  Returns: { now, outcome per job }: 0 already here (nothing written), else 1 + 2 (its
    deduplication id is held here by another job: not taken) + 4 (its parent is not here: the link
    was dropped).
  Codes: none; the caller validates and bounds the batch (at most about 1,000 values written). ]]
--@include base
--@include flow

local now = nowMs(argv.now)
local base = argv.base

-- Read phase: every job's fate before the first write.
local jobs = {}
for i = REST, #ARGV do
  local j = cjson.decode(ARGV[i])
  local jk = jobKey(base, j.i)
  j.jk = jk
  j.flags = 1
  if redis.call('EXISTS', jk) == 1 then
    j.flags = 0
  else
    if type(j.de) == 'table' then
      local holder = redis.call('GET', base .. 'de:' .. j.de.i)
      if holder and holder ~= j.i then j.flags = j.flags + 2 end
    end
    if type(j.pl) == 'table' and redis.call('EXISTS', jobKey(j.pl.b, j.pl.i)) == 0 then j.flags = j.flags + 4 end
  end
  jobs[#jobs + 1] = j
end

local cap = eventsCap(k.meta)
local fifo, added, names, states, dues = {}, {}, {}, {}, {}
local anyReady = false
local out = { now }
for _, j in ipairs(jobs) do
  out[#out + 1] = j.flags
  if j.flags > 0 then
    local id, jk = j.i, j.jk
    local fields = { 'n', j.n, 't', intStr(j.t), 's', j.s }
    local function put(name, value)
      if value ~= nil and value ~= cjson.null and value ~= '' then fields[#fields + 1] = name; fields[#fields + 1] = value end
    end
    put('o', j.o)
    if (j.p or 0) > 0 then put('p', intStr(j.p)) end
    if (j.dl or 0) > 0 then put('dl', intStr(j.dl)) end
    if (j.am or 0) > 0 then put('am', intStr(j.am)) end
    if (j.as or 0) > 0 then put('as', intStr(j.as)) end
    if (j.sc or 0) > 0 then put('sc', intStr(j.sc)) end
    if j.po then put('po', intStr(j.po)) end
    if j.fo then put('fo', intStr(j.fo)) end
    put('rv', j.rv)
    put('fr', j.fr)
    put('st', j.st)
    put('pg', j.pg)
    put('pb', j.pb)
    local logs = type(j.lg) == 'table' and j.lg or {}
    local children = type(j.ch) == 'table' and j.ch or nil
    if #logs > 0 or children then put('sx', '1') end
    if type(j.de) == 'table' and j.flags % 4 < 2 then
      local dk = base .. 'de:' .. j.de.i
      if j.de.t > 0 then
        redis.call('SET', dk, id, 'PX', intStr(j.de.t))
        put('dt', j.de.i)
      elseif j.s ~= 'completed' and j.s ~= 'failed' then
        -- Simple mode: the key lives until the job finishes, as addJobs writes it.
        redis.call('SET', dk, id)
        put('de', j.de.i)
      end
    end
    if type(j.pl) == 'table' and j.flags % 8 < 4 then put('pl', parentLink(j.pl.b, j.pl.i, j.pl.p)) end
    dataFields(base, id, j.d, fields)
    chunked('HSET', jk, fields, 2)
    if #logs > 0 then chunked('RPUSH', logsKey(base, id), logs) end
    local due = 0
    if j.s == 'waiting' then
      anyReady = true
      if j.fr_ == 1 then redis.call('LPUSH', k.wait, id) else fifo[#fifo + 1] = id end
    elseif j.s == 'prioritized' then
      anyReady = true
      pushPrioritized(k, id, j.p)
    elseif j.s == 'delayed' then
      due = j.du
      redis.call('ZADD', k.delayed, intStr(due), id)
    elseif j.s == 'completed' then
      redis.call('ZADD', k.completed, intStr(j.fo or now), id)
    elseif j.s == 'failed' then
      redis.call('ZADD', k.failed, intStr(j.fo or now), id)
    else
      redis.call('ZADD', k.waitingChildren, intStr(now), id)
    end
    if children then
      if #children.p > 0 then chunked('SADD', depsKey(base, id), children.p) end
      local pairsOf = { { children.c, processedKey(base, id) }, { children.f, failedChildrenKey(base, id) },
        { children.g, ignoredChildrenKey(base, id) } }
      for _, entry in ipairs(pairsOf) do
        local flat = {}
        for _, kv in ipairs(entry[1]) do flat[#flat + 1] = kv[1]; flat[#flat + 1] = kv[2] end
        if #flat > 0 then chunked('HSET', entry[2], flat, 2) end
      end
    end
    if j.s ~= 'completed' and j.s ~= 'failed' then
      added[#added + 1] = id
      names[#names + 1] = j.n
      states[#states + 1] = j.s
      dues[#dues + 1] = due
    end
  end
end
if #fifo > 0 then chunked('RPUSH', k.wait, fifo) end
-- A parent with nothing left pending moves on now (its last child finished before it came here).
for _, j in ipairs(jobs) do
  if j.flags > 0 and j.s == 'waiting-children' then releaseParent(base, j.i, now) end
end
if #added > 0 then
  -- Wake idle workers (a delayed job may now be the earliest: they re-arm their timer).
  if anyReady or #dues > 0 then signalWork(k.marker) end
  emitBatch(k.events, cap, 'added', added, 'names', cjson.encode(names), 'states', cjson.encode(states), 'delays', cjson.encode(dues))
end
return out
