--[[ complete: finishes a batch of active jobs held by the caller, then claims the next ones.
  KEYS: meta, wait, prio, prioCounter, delayed, active, completed, events, marker, limiter, failed
  Flags: allow-oom (runs when Redis is full under maxmemory: finishing jobs and renewing their locks
    must not fail while adds are refused, or running jobs would stall and run twice)
  ARGV: now, base, count, lockMs, tokenPrefix, exact, limit, by, ...jobs
    jobs: 5 values per job: id, token, attempt (attemptsStarted of the holder), returnvalue (JSON), keep
    keep: retention spec (see includes/retention).
  Returns: { now, code per job..., then the claim part (see claim) }
  A child's completion is recorded on its parent, which moves on once its last child is done
  (includes/flow). Outcomes are counted per job name (includes/counters). When it claims nothing and nothing is ready or active, emits `drained` (BullMQ's).
  Events: one `completed` entry for the call's completed jobs, which also lists the jobs it claimed
  next (field `active`, a JSON array of ids) instead of a second `active` entry.
  Codes: 1 done, 3 cancelled (the job was cancelled while running: it ends failed with the cancel
    reason, whatever the processor returned), -1 job missing, -2 stale token or attempt (lock
    lost), -3 not active ]]
--@include base
--@include retention
--@include remove
--@include scheduler
--@include claim
--@include counters

local now = nowMs(argv.now)
local base = argv.base
local cap, paused, qs = queueSettings(k.meta)
local rel = {}
local out = { now }
local fin = newFinisher(base, k.completed, now, qs.lean)
local nowS = intStr(now)
local doneIds, returnvalues = {}, {}
-- Read phase: every job's record and code before the first write (Redis does not roll back a
-- script that errors, so a batch either fails before writing or not at all).
local rows, codes, jks = {}, {}, {}
for i = REST, #ARGV, 5 do
  local id, token, attempt = ARGV[i], ARGV[i + 1], ARGV[i + 2]
  local jk = jobKey(base, id)
  jks[#jks + 1] = jk
  -- A queue that never used groups has no grouped job: it reads two fields fewer.
  local f
  if qs.groups then
    f = redis.call('HMGET', jk, 's', 'tk', 'as', 'am', 'de', 'cx', 'pl', 'n', 'sx', 'g', 'ga')
  else
    f = redis.call('HMGET', jk, 's', 'tk', 'as', 'am', 'de', 'cx', 'pl', 'n', 'sx')
  end
  local code = 1
  if not f[1] then
    code = -1
  elseif f[1] ~= 'active' then
    code = -3
  elseif f[2] ~= token or f[3] ~= attempt then
    code = -2
  elseif f[6] then
    code = 3
  end
  -- A parent link that does not parse (not written by Hopper) is ignored rather than failing the call.
  if f[7] and not isParentLink(f[7]) then f[7] = false end
  rows[#rows + 1] = f
  codes[#codes + 1] = code
end

-- Write phase.
local n = 0
-- Completed jobs per job name, counted once per name at the end (not once per job).
local doneNames = {}
for i = REST, #ARGV, 5 do
  n = n + 1
  local id, rv, keep = ARGV[i], ARGV[i + 3], ARGV[i + 4]
  local jk = jks[n]
  local f, code = rows[n], codes[n]
  if code == 3 then
    -- Cancelled while running: it ends as cancelled (failed), not completed.
    noteRelease(rel, f[10], f[11])
    if f[5] then releaseDedup(base, jk, id, now) end
    redis.call('ZREM', k.active, id)
    local cancelled = newFinisher(base, k.failed, now)
    finish(cancelled, jk, id, 'k', { 's', 'failed', 'fo', nowS, 'fr', f[6], 'am', istr((tonumber(f[4]) or 0) + 1) })
    flushFinisher(cancelled)
    emit(k.events, cap, 'failed', 'jobId', id, 'failedReason', f[6], 'prev', 'active', 'cancelled', '1')
    notifyParent(base, id, f[7], 'failed', f[6], now)
    countOutcome('cancelled', f[8])
  elseif code == 1 then
    noteRelease(rel, f[10], f[11])
    if f[5] then releaseDedup(base, jk, id, now) end
    local sx = f[9] ~= false
    if keep == 'r' then
      finishRemoved(fin, id, sx)
    else
      finish(fin, jk, id, keep, { 's', 'completed', 'fo', nowS, 'rv', rv, 'am', istr((tonumber(f[4]) or 0) + 1) }, sx)
    end
    doneIds[#doneIds + 1] = id
    local name = f[8] or ''
    doneNames[name] = (doneNames[name] or 0) + 1
    returnvalues[#returnvalues + 1] = rv
    if f[7] then notifyParent(base, id, f[7], 'completed', rv, now) end
  end
  out[#out + 1] = code
end
local done = #doneIds > 0
if done then
  chunked('ZREM', k.active, doneIds)
  flushFinisher(fin)
  for name, by in pairs(doneNames) do countOutcome('completed', name, by) end
end
flushReleases(base, rel)
flushCounts(base)
-- Under a global concurrency limit, a finished job frees a slot another worker may be waiting for.
if qs.gcc and done then signalWork(k.marker) end
local claimed, claimedIds = claimJobs(k, base, now, tonumber(argv.count), tonumber(argv.lockMs), argv.tokenPrefix, argv.exact == '1', cap, paused, qs, argv.limit, argv.by, out, nil, done)
if done then
  -- One stream entry for the call: the completed jobs (return values are JSON already: joined
  -- into a JSON array) and, in `active`, the jobs claimed next (QueueEvents emits completed, then active).
  local rvs = '[' .. table.concat(returnvalues, ',') .. ']'
  if claimed > 0 then
    emitBatch(k.events, cap, 'completed', doneIds, 'returnvalues', rvs, 'active', cjson.encode(claimedIds))
  else
    emitBatch(k.events, cap, 'completed', doneIds, 'returnvalues', rvs)
    emitIfDrained(k, base, cap, qs)
  end
end
return out
