--[[ claim: takes up to `count` ready jobs for a worker (after promoting due delayed jobs).
  KEYS: meta, wait, prio, prioCounter, delayed, active, events, marker
  ARGV: now, base, count, lockMs, tokenPrefix
  Returns: { now, paused (0/1), nextDue (ms or -1), n, then 10 values per job:
    id, name, data, opts, timestamp, attemptsMade, attemptsStarted, priority, delay, progress }
  The i-th job's lock token is tokenPrefix .. i. ]]
--@include base
--@include claim

local now = nowMs(argv.now)
local out = { now }
claimJobs(k, argv.base, now, tonumber(argv.count), tonumber(argv.lockMs), argv.tokenPrefix, eventsCap(k.meta), out)
return out
