--[[ claim: promotes due delayed jobs, then takes up to `count` ready jobs (waiting first, then
  prioritized) for one worker, locking each until now + lockMs under token tokenPrefix .. i.
  Limits: the queue's global concurrency (qs.gcc) and sliding-window rate limit (the worker's
  `limit` 'max:durationMs', else the queue's), judged on the start times recorded in `lw`; with
  groups on, jobs are taken round-robin over the ring of ready groups (takeGrouped).
  Appends to `out`: paused flag, next delayed due time (or -1), ms left of a rate limit (0 if
  none), whether a scheduler needs advancing (0/1), the number of jobs, then one row per job: { name, data, opts, timestamp, attemptsMade,
  attemptsStarted, priority, delay, progress, id, stalledCounter, failedReason } (absent values are nil; the timestamp is a
  number; name and opts are nil when equal to the previous row's, opts '' when absent). With `exact`, the single claimed
  job's token is tokenPrefix itself (manual processing with the caller's token). Used by claim, complete and fail so a worker acknowledges
  finished jobs and takes the next ones in one round trip. At most CLAIM_MAX (1,000) jobs per call.
  `by` (the worker's name, or '') is stored on each claimed job as `pb` (processedBy).
  A weighted limit ('max:durationMs:w', or the queue's with meta `lwt`) counts each job's `cost`
  (default 1) instead of 1, in the window `lx`/`lxs` (includes/window): jobs are looked at one by
  one from the head and taken while their weight fits; the first that does not fit stays at the
  head (FIFO, so a heavy job is not overtaken forever) and the claim reports when it will fit. A
  job heavier than the whole window could never fit: it is taken without being counted and its
  row carries a 13th value 'max:durationMs', for the worker to fail it. With groups, the weighted
  queue limit and weighted group limits are judged job by job inside the group's turn (takeFitting,
  docs/groups.md): a group whose head job does not fit its own window is parked until it fits
  (other groups go on); a job that fits its group but not the queue's window stops the claim, its
  group keeping the head of the ring. ]]
--@include window
--@include claimgroups

local PROMOTE_BATCH = '1000'
-- Most jobs one call claims: a worker with more free slots asks again (runtime/dispatcher).
local CLAIM_MAX = 1000

-- Moves delayed jobs whose due time has come to their ready structure (bounded per call).
-- Returns how many jobs were promoted, and whether a scheduler's occurrence fell due (its
-- scheduler then needs its next occurrence, which TypeScript computes).
-- `nowS`: `now` as a string, when the caller has it (see istr).
local function promoteDue(k, base, now, cap, nowS)
  local scored = redis.call('ZRANGEBYSCORE', k.delayed, '-inf', nowS or intStr(now), 'WITHSCORES', 'LIMIT', '0', PROMOTE_BATCH)
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


-- A sorted set of up to 128 members (zset-max-listpack-entries) is a listpack, where every insert
-- scans all members: with 100 jobs running, a claim's ZADD into `active` cost ~1.2 µs per lock
-- against ~0.2 µs in a skiplist (measured on Redis 7.0, 50 locks per call). Redis keeps a sorted
-- set a skiplist once converted, until it empties, so before adding a large batch to a listpack
-- `active`, the claim converts it: it adds and removes a member too long for a listpack (an id that
-- long is itself a skiplist member: with NX nothing is added or removed then). A read error (OBJECT
-- renamed or refused) only skips this.
local SKIPLIST_AT = 32
local LONG_MEMBER = '~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~:hopper:skiplist'
local function preferSkiplist(key, adding)
  if adding < 8 then return end
  local encoding = redis.pcall('OBJECT', 'ENCODING', key)
  if encoding ~= 'listpack' and encoding ~= 'ziplist' then return end
  if redis.call('ZCARD', key) + adding < SKIPLIST_AT then return end
  if redis.call('ZADD', key, 'NX', '0', LONG_MEMBER) == 1 then redis.call('ZREM', key, LONG_MEMBER) end
end

-- Records the start of claimed job `id` (attempt `started`, a string) at `nowS` (the call's now as a
-- string) in the sliding windows it counts in.
local function recordStart(starts, key, ttl, nowS, id, started)
  local list = starts[key]
  if not list then
    list = { ttl = ttl }
    starts[key] = list
    starts[#starts + 1] = key
  end
  list[#list + 1] = nowS
  list[#list + 1] = id .. ':' .. started
end

-- Passes the wake-up on to the next idle worker when work is left (with groups on: may be). The
-- marker is read first: while workers are busy it already holds its token (nobody waits to pop
-- it), and then what is left need not be looked at.
local function passWakeUp(k, groups)
  if redis.call('LLEN', k.marker) == 0 and (groups or redis.call('LLEN', k.wait) > 0 or redis.call('ZCARD', k.prio) > 0) then
    redis.call('RPUSH', k.marker, '1')
  end
end

-- `firedBefore`: the caller already promoted due jobs itself (fail), and a scheduler's occurrence fell due.
-- Appends the reply of a claim that takes no job: `paused` (1 or 0), `limited` (ms until the
-- rate limit lets a job start; 0: not limited) and `nextDue` (the next delayed job's due time, or
-- nil: -1).
local function appendNoJob(out, paused, limited, schedulersDue, nextDue)
  out[#out + 1] = paused
  out[#out + 1] = nextDue or -1
  out[#out + 1] = limited
  out[#out + 1] = schedulersDue
  out[#out + 1] = 0
end

-- `deferActive`: the caller writes the claimed jobs' `active` event itself, in its own entry
-- (complete: one stream entry per call); claimJobs then returns the claimed ids too.
local function claimJobs(k, base, now, count, lockMs, tokenPrefix, exact, cap, paused, qs, limit, by, out, firedBefore, deferActive)
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
  -- Numbers sent to Redis as strings, made once per call (see istr).
  local nowS = intStr(now)
  local promoted, fired = promoteDue(k, base, now, cap, nowS)
  -- Promoting a due grouped job may have turned groups on after the settings were read.
  if promoted > 0 and not qs.groups and redis.call('HEXISTS', k.meta, 'gm') == 1 then qs.groups = true end
  local schedulersDue = 0
  if fired or firedBefore then schedulersDue = 1 end
  if paused then
    -- Due delayed jobs still become waiting while the queue is paused (as in BullMQ): the reply
    -- names the next due time, so that an idle worker wakes to promote it.
    local first = redis.call('ZRANGE', k.delayed, '0', '0', 'WITHSCORES')
    appendNoJob(out, 1, 0, schedulersDue, first[2] and tonumber(first[2]) or nil)
    return 0
  end
  local limited = redis.call('PTTL', k.limiter)
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
  -- Weighted group windows: the weight each claimed job takes (by id), and the sums to add.
  local gweights = nil
  if want > 0 and wexpired and not qs.groups then
    -- Weighted: one job at a time from the head, while its weight fits.
    weights, heavy = {}, {}
    while #ids < want do
      local id = redis.call('LINDEX', k.wait, 0)
      local fromPrio = not id
      if fromPrio then id = redis.call('ZRANGE', k.prio, 0, 0)[1] end
      if not id then break end
      local w = jobCost(redis.call('HGET', jobKey(base, id), 'o'))
      if w > lmax then
        heavy[id] = lmax .. ':' .. ldur
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
      local wt = { heavy = {}, g = {}, q = {} }
      local qw = nil
      if wexpired then qw = { use = wuse, max = lmax, dur = ldur } end
      local blocked = takeGrouped(k, base, now, want, qs, ids, groupOf, counted, windows, qw, wt)
      heavy, gweights = wt.heavy, wt.g
      if qw then
        weights = wt.q
        windowTrim(wkey, wsum, wexpired, wfreed)
        if blocked and #ids == 0 then
          appendNoJob(out, 0, windowRoomIn(wkey, now, ldur, qw.use, blocked, lmax), schedulersDue)
          return 0
        end
      end
    else
      local popped = redis.call('LPOP', k.wait, istr(want))
      if popped then ids = popped end
      if #ids < want then
        local pr = redis.call('ZPOPMIN', k.prio, want - #ids)
        for i = 1, #pr, 2 do ids[#ids + 1] = pr[i] end
      end
    end
  end
  local nextDue = -1
  if #ids < count or count == 0 then
    local first = redis.call('ZRANGE', k.delayed, '0', '0', 'WITHSCORES')
    if first[2] then nextDue = tonumber(first[2]) end
    if qs.groups then
      -- A group parked by its rate limit reopens then: wake for it too.
      local reopen = redis.call('ZRANGE', base .. 'gl', '0', '0', 'WITHSCORES')
      if reopen[2] and (nextDue < 0 or tonumber(reopen[2]) < nextDue) then nextDue = tonumber(reopen[2]) end
    end
  end
  out[#out + 1] = 0
  out[#out + 1] = nextDue
  out[#out + 1] = 0
  out[#out + 1] = schedulersDue
  local countAt = #out + 1
  out[countAt] = 0
  local deadline = intStr(now + lockMs)
  local claimed = 0
  local locks = {}
  local claimedIds = {}
  local starts = {}
  local wtotal = 0
  local gsums = {}
  local prevName, prevOpts
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
      local token = tokenPrefix
      if not exact then token = tokenPrefix .. istr(claimed) end
      local startedS = '1'
      if started > 1 then startedS = istr(started) end
      local g = groupOf and groupOf[id]
      if g then
        -- A grouped job records whether its group counted it (released when it leaves active).
        redis.call('HSET', jk, 's', 'active', 'tk', token, 'as', startedS, 'po', nowS, 'ga', counted[g] and '1' or '0')
      elseif by == '' then
        redis.call('HSET', jk, 's', 'active', 'tk', token, 'as', startedS, 'po', nowS)
      else
        redis.call('HSET', jk, 's', 'active', 'tk', token, 'as', startedS, 'po', nowS, 'pb', by)
      end
      if g and by ~= '' then redis.call('HSET', jk, 'pb', by) end
      if weights then
        if weights[id] then
          recordStart(starts, wkey, ldur, nowS, id .. ':' .. startedS, weights[id])
          wtotal = wtotal + weights[id]
        end
      elseif lmax and lmax > 0 then
        recordStart(starts, lw, ldur, nowS, id, startedS)
      end
      if g and windows[g] then
        local w = windows[g]
        if not w[3] then
          recordStart(starts, w[1], w[2], nowS, id, startedS)
        elseif gweights[id] then
          -- A weighted group window: member '<id>:<attempt>:<weight>', and its running sum.
          recordStart(starts, w[1], w[2], nowS, id .. ':' .. startedS, gweights[id])
          if not gsums[w[3]] then
            gsums[w[3]] = { w[2], 0 }
            gsums[#gsums + 1] = w[3]
          end
          gsums[w[3]][2] = gsums[w[3]][2] + gweights[id]
        end
      end
      -- The job goes back as the HMGET row itself (fewer table writes than copying it out):
      -- name, data, opts, timestamp, attemptsMade, attemptsStarted, priority, delay, progress, id,
      -- stalledCounter, failedReason (of the previous attempt).
      if not f[2] then f[2] = readData(base, id, jk, false, f[10]) end
      -- A name or opts equal to the previous row's goes back as nil (the client reuses the
      -- previous row's): jobs claimed together mostly share both, and each value left out is one
      -- string less to send and decode. Lua strings are interned: the comparison is O(1).
      if f[1] == prevName then f[1] = false else prevName = f[1] end
      local o = f[3] or ''
      if o == prevOpts then f[3] = false else f[3] = o; prevOpts = o end
      -- The timestamp as a number: an integer in the reply, not a string to decode.
      f[4] = tonumber(f[4]) or 0
      f[6] = started
      f[10] = id
      if heavy and heavy[id] then f[13] = heavy[id] end
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
  for i = 1, #gsums do
    local key = gsums[i]
    redis.call('INCRBYFLOAT', key, gsums[key][2])
    redis.call('PEXPIRE', key, gsums[key][1])
  end
  for i = 1, #starts do
    local key = starts[i]
    chunked('ZADD', key, starts[key], 2)
    redis.call('PEXPIRE', key, starts[key].ttl)
  end
  if claimed > 0 then
    preferSkiplist(k.active, claimed)
    chunked('ZADD', k.active, locks, 2)
    if not deferActive then emitBatch(k.events, cap, 'active', claimedIds) end
    if #ids == count then passWakeUp(k, qs.groups) end
  end
  return claimed, claimedIds
end

-- BullMQ's global `drained`, emitted by complete and fail when the worker that finished jobs claimed
-- none: nothing is ready (waiting, prioritized, or in a group's queue) and nothing is active.
local function emitIfDrained(k, base, cap, qs)
  if redis.call('ZCARD', k.active) > 0 or redis.call('LLEN', k.wait) > 0 or redis.call('ZCARD', k.prio) > 0 then return end
  if qs.groups and (redis.call('LLEN', base .. 'gr') > 0 or redis.call('ZCARD', base .. 'gl') > 0) then return end
  emit(k.events, cap, 'drained')
end
