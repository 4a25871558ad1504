--[[ unregisterWorker: removes a closing worker from the queue's worker registry.
  KEYS: workers, workerInfo
  ARGV: workerId
  Returns: 1 ]]

redis.call('ZREM', k.workers, argv.workerId)
redis.call('HDEL', k.workerInfo, argv.workerId)
return 1
