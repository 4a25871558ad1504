--[[ cancelRun: marks a run cancelled (`queue.cancelRun`): no turn of it is added any more
  (continueJob refuses). Returns its latest turn's id, which the caller then cancels like any job
  ('' when the run never continued: its only turn is the run's own id). Marking twice keeps the
  first reason.
  KEYS: run
  ARGV: reason
  Returns: the latest turn's id, or ''. ]]
local RUN_TTL = 2592000000

redis.call('HSETNX', k.run, 'cr', argv.reason)
redis.call('PEXPIRE', k.run, RUN_TTL)
return redis.call('HGET', k.run, 'l') or ''
