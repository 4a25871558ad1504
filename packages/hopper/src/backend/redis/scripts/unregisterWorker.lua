--[[ unregisterWorker: removes a closing worker from the queue's worker registry.
  KEYS: workers, workerInfo
  Flags: allow-oom (it only deletes: it runs while Redis is full, as it did as an EVAL script)
  ARGV: workerId
  Returns: 1 ]]

redis.call('ZREM', k.workers, argv.workerId)
redis.call('HDEL', k.workerInfo, argv.workerId)
return 1
