--[[ initQueue: records a queue's settings when a Queue starts: the events stream cap and the
  key layout version (so a future layout can tell old data apart).
  KEYS: meta
  ARGV: maxEvents, layoutVersion
  Returns: 1 ]]

redis.call('HSET', k.meta, 'maxEvents', argv.maxEvents)
redis.call('HSETNX', k.meta, 'v', argv.layoutVersion)
return 1
