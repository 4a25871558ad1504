--[[ cancelJob: cancels a job from any process. A job that has not started (waiting, prioritized,
  delayed) fails at once with the cancel reason (`cx` set, no retry, never dead-lettered). An
  active job is marked (`cx`) and its worker is told on the queue's cancel channel (pub/sub; its
  lock renewal reports it too, as a fallback): its signal aborts, and whatever the processor
  then returns, the attempt ends as cancelled (complete and fail check `cx`).
  A parent's pending children are copied to cc:<id> for the caller to cancel in batches.
  Idempotent (ioredis re-sends a command whose reply was lost): a job already cancelled answers
  as the first call did (1 for one that ended cancelled, 2 for an active one already told), and
  nothing is written or emitted twice (an active job's worker is told again: pub/sub only).
  A job cancelled here is counted as cancelled (includes/counters); an active one when it ends.
  A job scheduler's pending run is refused (includes/pending): cancel or pause the scheduler.
  KEYS: meta, wait, prio, delayed, failed, events, waitingChildren
  ARGV: now, base, id, reason, channel, failKeep
  Returns: 1 cancelled now; 2 active: its worker was told; 0 no such job; -3 already finished;
    -5 a scheduler's pending run. ]]
--@include base
--@include remove
--@include retention
--@include pending
--@include counters

local now = nowMs(argv.now)
local base = argv.base
local id = argv.id
local jk = jobKey(base, id)
local f = redis.call('HMGET', jk, 's', 'o', 'pl', 'cx', 'n')
local state = f[1]
if not state then return 0 end
if state == 'failed' and f[4] then return 1 end
if state == 'completed' or state == 'failed' then return -3 end
if state == 'active' and f[4] then
  -- Told already: nothing is written or emitted again, but the worker is told again (a worker
  -- that subscribed after the first message hears this one; aborting twice is a no-op).
  redis.call('PUBLISH', argv.channel, id)
  return 2
end
if pendingRunOf(base, id) then return -5 end
local cap = eventsCap(k.meta)
-- A parent's pending children are cancelled too, by the caller, from a set of their own that
-- outlives the parent's retention (cc:<id>, kept a day).
local function stashChildren()
  local dk = base .. 'dp:' .. id
  if redis.call('EXISTS', dk) == 1 then
    redis.call('SUNIONSTORE', base .. 'cc:' .. id, dk)
    redis.call('PEXPIRE', base .. 'cc:' .. id, 86400000)
  end
end
stashChildren()
if state == 'active' then
  redis.call('HSET', jk, 'cx', argv.reason)
  redis.call('PUBLISH', argv.channel, id)
  emit(k.events, cap, 'cancelling', 'jobId', id, 'reason', argv.reason)
  return 2
end
unlinkJob(k, base, id, state)
releaseDedup(base, jk, id, now)
redis.call('HSET', jk, 'cx', argv.reason)
local fin = newFinisher(base, k.failed, now)
local kept = finish(fin, jk, id, failKeepOf(f[2], argv.failKeep), { 's', 'failed', 'fo', now, 'fr', argv.reason })
flushFinisher(fin)
emit(k.events, cap, 'failed', 'jobId', id, 'failedReason', argv.reason, 'prev', state, 'cancelled', '1')
notifyParent(base, id, f[3], 'failed', argv.reason, now, not kept)
countOutcome('cancelled', f[5])
flushCounts(base)
return 1
