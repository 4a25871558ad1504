--[[ fail: ends a batch of failed attempts held by the caller: each job is retried (back to
  ready, or delayed by its backoff) or failed for good; then claims the next jobs.
  KEYS: meta, wait, prio, prioCounter, delayed, active, failed, events, marker, limiter
  ARGV: now, base, count, lockMs, tokenPrefix, exact, limit, queueName, ...jobs
    jobs: 7 values per job: id, token, attempt, reason, stack ('' = none), retryDelay, keep
    retryDelay: -1 fail for good, -2 fail for good because attempts are exhausted (also emits
      retries-exhausted), 0 retry now, > 0 retry after that many ms.
    stack: this attempt's stack trace, kept in a JSON list of at most stackTraceLimit entries;
      the limit travels with it as 'limit|stack'.
  Returns: { now, code per job..., then the claim part (see claim) }
  Codes: 1 retried, 2 failed, -1 job missing, -2 stale token or attempt, -3 not active ]]
--@include base
--@include retention
--@include remove
--@include deadletter
--@include flow
--@include scheduler
--@include claim

local now = nowMs(argv.now)
local base = argv.base
local cap, paused, qs = queueSettings(k.meta)
local rel, freed = {}, 0
local out = { now }
local fin = newFinisher(base, k.failed, now)

local function appendStack(jk, stack)
  if stack == '' then return nil end
  local sep = string.find(stack, '|', 1, true)
  local limit = tonumber(string.sub(stack, 1, sep - 1))
  local trace = string.sub(stack, sep + 1)
  local list = {}
  local stored = redis.call('HGET', jk, 'st')
  if stored then list = cjson.decode(stored) end
  table.insert(list, 1, trace)
  while #list > limit do table.remove(list) end
  if #list == 0 then return nil end
  return cjson.encode(list)
end

for i = REST, #ARGV, 7 do
  local id, token, attempt, reason = ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3]
  local stack, retryDelay, keep = ARGV[i + 4], tonumber(ARGV[i + 5]), ARGV[i + 6]
  local jk = jobKey(base, id)
  local f
  if qs.groups then
    f = redis.call('HMGET', jk, 's', 'tk', 'as', 'am', 'p', 'de', 'cx', 'pl', 'g', 'ga')
  else
    f = redis.call('HMGET', jk, 's', 'tk', 'as', 'am', 'p', 'de', 'cx', 'pl')
  end
  local code
  if not f[1] then
    code = -1
  elseif f[1] ~= 'active' then
    code = -3
  elseif f[2] ~= token or f[3] ~= attempt then
    code = -2
  else
    redis.call('ZREM', k.active, id)
    noteRelease(rel, f[9], f[10])
    freed = freed + 1
    local made = (tonumber(f[4]) or 0) + 1
    -- Cancelled while running: no retry, and the cancel reason is the failed reason.
    if f[7] then
      retryDelay = -1
      reason = f[7]
    end
    local st = appendStack(jk, stack)
    if st then redis.call('HSET', jk, 'st', st) end
    if retryDelay >= 0 then
      code = 1
      redis.call('HDEL', jk, 'tk')
      redis.call('HSET', jk, 'am', made, 'fr', reason)
      if retryDelay > 0 then
        pushDelayed(k, jk, id, now + retryDelay)
        emit(k.events, cap, 'delayed', 'jobId', id, 'delay', now + retryDelay, 'prev', 'active')
      else
        local state = pushReady(k, jk, id, tonumber(f[5]) or 0, false, qs.groups and f[9] or false)
        signalWork(k.marker)
        emit(k.events, cap, 'waiting', 'jobId', id, 'prev', 'active', 'state', state)
      end
    else
      code = 2
      if f[6] then releaseDedup(base, jk, id) end
      -- Before finishing (which may delete the job): the dead letter copies it.
      deadLetter(base, argv.queueName, id, jk, now, made, reason)
      finish(fin, jk, id, keep, { 's', 'failed', 'fo', now, 'fr', reason, 'am', made })
      emit(k.events, cap, 'failed', 'jobId', id, 'failedReason', reason, 'prev', 'active', 'attemptsMade', made)
      if f[7] then emit(k.events, cap, 'cancelled', 'jobId', id, 'reason', reason) end
      if retryDelay == -2 then
        emit(k.events, cap, 'retries-exhausted', 'jobId', id, 'attemptsMade', made)
      end
      -- A child failed for good: its parent's side follows the child's failure policy.
      notifyParent(base, id, f[8], 'failed', reason, now)
    end
  end
  out[#out + 1] = code
end
flushFinisher(fin)
flushReleases(base, rel)
if qs.gcc and freed > 0 then signalWork(k.marker) end
claimJobs(k, base, now, tonumber(argv.count), tonumber(argv.lockMs), argv.tokenPrefix, argv.exact == '1', cap, paused, qs, argv.limit, out)
return out
