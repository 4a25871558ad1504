--[[ claim: takes up to `count` ready jobs for a worker (after promoting due delayed jobs).
  KEYS: meta, wait, prio, prioCounter, delayed, active, events, marker, limiter
  Flags: allow-oom (workers keep draining the queue while Redis is full: claiming moves jobs that
    exist, a few fields each, and finishing them is allowed too; as a function without the flag,
    Redis would refuse every claim, even on an empty queue)
  ARGV: now, base, count, lockMs, tokenPrefix, exact, limit, by, waitWorker, waitSeq
    limit: the worker's rate limit 'max:durationMs', or '' for the queue's (if any).
    by: the worker's name, stored on each claimed job as processedBy ('' = none).
    waitWorker, waitSeq: '' and '', or for a claim queued behind an idle wait (waitThenClaim) the
      worker's id and the claim's number: void, it takes nothing, once that worker's orphan release
      has voided its wait claims up to waitSeq (releaseOrphans's voidUpTo: the worker left that
      connection and no longer reads its reply); the wake-up its wait took is passed on.
  Returns: { now, paused (0/1), nextDue (ms or -1), limitedFor (ms), schedulersDue (0/1), n, then one row per job:
    { name, data, opts, timestamp, attemptsMade, attemptsStarted, priority, delay, progress, id,
      stalledCounter, failedReason } }: timestamp a number; name and opts nil when equal to the previous
    row's (the client reuses it), opts '' when the job has none.
  The i-th job's lock token is tokenPrefix .. i, or tokenPrefix itself when exact is 1. ]]
--@include base
--@include scheduler
--@include claim

local now = nowMs(argv.now)
local out = { now }
local cap, paused, qs = queueSettings(k.meta)
if argv.waitWorker ~= '' then
  local voided = tonumber(redis.call('GET', waitClaimVoidKey(argv.base, argv.waitWorker)))
  if voided and voided >= tonumber(argv.waitSeq) then
    passWakeUp(k, qs.groups)
    appendNoJob(out, 0, 0, 0)
    return out
  end
end
claimJobs(k, argv.base, now, tonumber(argv.count), tonumber(argv.lockMs), argv.tokenPrefix, argv.exact == '1', cap, paused, qs, argv.limit, argv.by, out)
return out
