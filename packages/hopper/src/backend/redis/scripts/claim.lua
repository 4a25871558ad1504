--[[ claim: takes up to `count` ready jobs for a worker (after promoting due delayed jobs).
  KEYS: meta, wait, prio, prioCounter, delayed, active, events, marker, limiter
  Flags: allow-oom (workers keep draining the queue while Redis is full: claiming moves jobs that
    exist, a few fields each, and finishing them is allowed too; as a function without the flag,
    Redis would refuse every claim, even on an empty queue)
  ARGV: now, base, count, lockMs, tokenPrefix, exact, limit, by, guard
    limit: the worker's rate limit 'max:durationMs', or '' for the queue's (if any).
    by: the worker's name, stored on each claimed job as processedBy ('' = none).
    guard: '' or '<seq>|<workerId>' for a claim queued behind an idle wait (waitThenClaim): void,
      it takes nothing, once the worker's orphan release has voided its wait claims up to `seq`
      (releaseOrphans's voidUpTo: the worker left that connection and no longer reads its reply);
      the wake-up its wait took is then passed on when jobs are ready.
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
if argv.guard ~= '' then
  local bar = string.find(argv.guard, '|', 1, true)
  local voided = tonumber(redis.call('GET', waitClaimVoidKey(argv.base, string.sub(argv.guard, bar + 1))))
  if voided and voided >= tonumber(string.sub(argv.guard, 1, bar - 1)) then
    if redis.call('LLEN', k.wait) > 0 or redis.call('ZCARD', k.prio) > 0 or redis.call('EXISTS', argv.base .. 'gr') == 1 then
      signalWork(k.marker)
    end
    appendNoJob(out, 0, 0, 0)
    return out
  end
end
local cap, paused, qs = queueSettings(k.meta)
claimJobs(k, argv.base, now, tonumber(argv.count), tonumber(argv.lockMs), argv.tokenPrefix, argv.exact == '1', cap, paused, qs, argv.limit, argv.by, out)
return out
