--[[ exportTakePending: takes a job scheduler's pending run into the way back's moving set
  (`hopper migrate --to-bullmq`), if it still waits for its time (delayed, never started): no
  worker here runs it while BullMQ's scheduler is written with that run as its next one.
  KEYS: delayed, moving, info, seq
  ARGV: base, id, scheduler
  Returns: 1 taken (or already in the moving set), 0 not taken (not the scheduler's pending run
    any more, started, or gone).
  Codes: none. ]]
--@include base
--@include pending

if redis.call('ZSCORE', k.moving, argv.id) then return 1 end
if not isWaitingOccurrence(argv.base, argv.id) then return 0 end
if redis.call('HGET', argv.base .. 's:' .. argv.scheduler, 'pid') ~= argv.id then return 0 end
local score = redis.call('ZSCORE', k.delayed, argv.id)
if not score then return 0 end
redis.call('ZREM', k.delayed, argv.id)
redis.call('ZADD', k.moving, redis.call('INCR', k.seq), argv.id)
redis.call('HSET', k.info, argv.id, cjson.encode({ s = 'scheduled', sc = score, g = '' }))
return 1
