--[[ fail: ends a batch of failed attempts held by the caller: each job is retried (back to
  ready, or delayed by its backoff) or failed for good; then claims the next jobs.
  KEYS: meta, wait, prio, prioCounter, delayed, active, failed, events, marker, limiter
  Flags: allow-oom (runs when Redis is full under maxmemory: finishing jobs and renewing their locks
    must not fail while adds are refused, or running jobs would stall and run twice)
  ARGV: now, base, count, lockMs, tokenPrefix, exact, limit, by, queueName, ...jobs
    jobs: 8 values per job: id, token, attempt, reason, stack ('' = none), retryDelay, keep, tag
    tag: 't' when the attempt timed out (counted as timed-out), else ''.
    retryDelay: -1 fail for good, -2 fail for good because attempts are exhausted (also emits
      retries-exhausted), 0 retry now (behind the delayed jobs already due: they are promoted
      first, as BullMQ does), > 0 retry after that many ms.
    stack: this attempt's stack trace, kept in a JSON list of at most stackTraceLimit entries;
      the limit travels with it as 'limit|stack'.
  Outcomes are counted per job name (includes/counters): retried, failed, cancelled, timed-out,
  dead-lettered. When a job failed for good, it claims nothing, and nothing is ready or active: emits `drained`.
  Returns: { now, code per job..., then the claim part (see claim) }
  Codes: 1 retried, 2 failed, 3 failed as cancelled (its cx mark), -1 job missing, -2 stale token or attempt, -3 not active ]]
--@include base
--@include retention
--@include remove
--@include deadletter
--@include flow
--@include scheduler
--@include claim
--@include counters

local now = nowMs(argv.now)
local base = argv.base
local cap, paused, qs = queueSettings(k.meta)
local rel, freed = {}, 0
local failedForGood = false
local out = { now }
local fin = newFinisher(base, k.failed, now)

-- This attempt's stack trace added to the job's stored ones (`stored`: the `st` field).
local function appendStack(stored, stack)
  if stack == '' then return nil end
  local sep = string.find(stack, '|', 1, true)
  local limit = tonumber(string.sub(stack, 1, sep - 1))
  local trace = string.sub(stack, sep + 1)
  local list = {}
  if stored then
    local ok, decoded = pcall(cjson.decode, stored)
    if ok and type(decoded) == 'table' then list = decoded end
  end
  table.insert(list, 1, trace)
  while #list > limit do table.remove(list) end
  if #list == 0 then return nil end
  return cjson.encode(list)
end

-- Read phase: every job's fate, its new stack traces and its dead-letter route are decided
-- before the first write (Redis does not roll back a script that errors).
local plan = {}
for i = REST, #ARGV, 8 do
  local id, token, attempt, reason = ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3]
  local retryDelay = tonumber(ARGV[i + 5])
  local jk = jobKey(base, id)
  local f
  if qs.groups then
    f = redis.call('HMGET', jk, 's', 'tk', 'as', 'am', 'p', 'de', 'cx', 'pl', 'st', 'n', 'g', 'ga')
  else
    f = redis.call('HMGET', jk, 's', 'tk', 'as', 'am', 'p', 'de', 'cx', 'pl', 'st', 'n')
  end
  -- A parent link that does not parse (not written by Hopper) is ignored rather than failing the call.
  if f[8] and not isParentLink(f[8]) then f[8] = false end
  local e = { i = i, id = id, jk = jk, f = f, reason = reason, retryDelay = retryDelay }
  if not f[1] then
    e.code = -1
  elseif f[1] ~= 'active' then
    e.code = -3
  elseif f[2] ~= token or f[3] ~= attempt then
    e.code = -2
  else
    -- Cancelled while running: no retry, and the cancel reason is the failed reason.
    if f[7] then
      e.retryDelay = -1
      e.reason = f[7]
    end
    e.st = appendStack(f[9], ARGV[i + 4])
    if e.retryDelay >= 0 then
      e.code = 1
    else
      -- 3: failed for good because it was cancelled (the holder then reports a CancelledError).
      e.code = f[7] and 3 or 2
      e.route = deadLetterRoute(base, argv.queueName, id, jk)
    end
  end
  plan[#plan + 1] = e
end

-- An immediate retry goes behind the delayed jobs already due, as in BullMQ (its retry promotes
-- them first): they are promoted before it is pushed back (claimJobs then finds none left).
local firedEarly = false
for n = 1, #plan do
  if plan[n].code == 1 and plan[n].retryDelay == 0 then
    local promoted
    promoted, firedEarly = promoteDue(k, base, now, cap)
    if promoted > 0 and not qs.groups and redis.call('HEXISTS', k.meta, 'gm') == 1 then qs.groups = true end
    break
  end
end

-- Write phase.
for n = 1, #plan do
  local e = plan[n]
  local id, jk, f, reason, retryDelay = e.id, e.jk, e.f, e.reason, e.retryDelay
  if e.code > 0 then
    redis.call('ZREM', k.active, id)
    noteRelease(rel, f[11], f[12])
    freed = freed + 1
    local made = (tonumber(f[4]) or 0) + 1
    if e.st then redis.call('HSET', jk, 'st', e.st) end
    if ARGV[e.i + 7] == 't' then countOutcome('timed-out', f[10]) end
    if e.code == 1 then
      countOutcome('retried', f[10])
      redis.call('HDEL', jk, 'tk')
      if retryDelay > 0 then
        -- The backoff is the job's delay now (job.delay, as BullMQ).
        redis.call('HSET', jk, 'am', made, 'fr', reason, 'dl', retryDelay)
        pushDelayed(k, jk, id, now + retryDelay)
        emit(k.events, cap, 'delayed', 'jobId', id, 'delay', now + retryDelay, 'prev', 'active')
      else
        redis.call('HSET', jk, 'am', made, 'fr', reason)
        local state = pushReady(k, jk, id, tonumber(f[5]) or 0, false, qs.groups and f[11] or false)
        signalWork(k.marker)
        emit(k.events, cap, 'waiting', 'jobId', id, 'prev', 'active', 'state', state)
      end
    else
      failedForGood = true
      if f[6] then releaseDedup(base, jk, id, now) end
      -- Before finishing (which may delete the job): the dead letter copies it.
      if deadLetter(base, argv.queueName, id, jk, now, made, reason, e.route) then countOutcome('dead-lettered', f[10]) end
      countOutcome(e.code == 3 and 'cancelled' or 'failed', f[10])
      local kept = finish(fin, jk, id, ARGV[e.i + 6], { 's', 'failed', 'fo', now, 'fr', reason, 'am', made })
      emit(k.events, cap, 'failed', 'jobId', id, 'failedReason', reason, 'prev', 'active', 'attemptsMade', made)
      if f[7] then emit(k.events, cap, 'cancelled', 'jobId', id, 'reason', reason) end
      if retryDelay == -2 then
        emit(k.events, cap, 'retries-exhausted', 'jobId', id, 'attemptsMade', made)
      end
      -- A child failed for good: its parent's side follows the child's failure policy.
      notifyParent(base, id, f[8], 'failed', reason, now, not kept)
    end
  end
  out[#out + 1] = e.code
end
flushFinisher(fin)
flushReleases(base, rel)
flushCounts(base)
if qs.gcc and freed > 0 then signalWork(k.marker) end
local claimed = claimJobs(k, base, now, tonumber(argv.count), tonumber(argv.lockMs), argv.tokenPrefix, argv.exact == '1', cap, paused, qs, argv.limit, argv.by, out, firedEarly)
-- As BullMQ: a job failed for good is finished; a retried one is not.
if claimed == 0 and failedForGood then emitIfDrained(k, base, cap, qs) end
return out
