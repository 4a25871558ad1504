--[[ removeScheduler: deletes a job scheduler and its pending occurrence (if it has not started:
  delayed, or ready and not taken by a worker, includes/pending; occurrences already running or
  finished are left alone).
  KEYS: schedulers, schedDue, delayed, events, meta, wait, prio
  ARGV: base, id
  Returns: 1 removed, 0 no such scheduler. ]]
--@include base
--@include pending

local base = argv.base
local sk = base .. 's:' .. argv.id
local pid = redis.call('HGET', sk, 'pid')
if redis.call('EXISTS', sk) == 0 then return 0 end
withdrawPending(k, base, pid)
redis.call('DEL', sk, base .. 'sf:' .. argv.id)
redis.call('ZREM', k.schedulers, argv.id)
redis.call('ZREM', k.schedDue, argv.id)
emit(k.events, eventsCap(k.meta), 'scheduler-removed', 'schedulerId', argv.id)
return 1
