--[[ rateLimit: stops every worker of the queue from claiming for `ms` (BullMQ's
  worker.rateLimit, for a 429 from a downstream API). Claims report how long is left. With
  `ms` 0 it lifts the limit instead: the manual one and the sliding window's record of recent
  starts (BullMQ's queue.removeRateLimitKey) and of a weighted limit's recent weights, and wakes idle workers.
  KEYS: limiter, window, weightedWindow, weightedSum, marker
  ARGV: ms
  Returns: 1 ]]
--@include base

local ms = tonumber(argv.ms)
if ms > 0 then
  redis.call('SET', k.limiter, '1', 'PX', ms)
  return 1
end
local removed = redis.call('DEL', k.limiter, k.window, k.weightedWindow, k.weightedSum)
signalWork(k.marker)
return removed
