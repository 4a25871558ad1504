--[[ rateLimit: stops every worker of the queue from claiming for `ms` (BullMQ's
  worker.rateLimit, for a 429 from a downstream API). Claims report how long is left.
  KEYS: limiter
  ARGV: ms
  Returns: 1 ]]

redis.call('SET', k.limiter, '1', 'PX', tonumber(argv.ms))
return 1
