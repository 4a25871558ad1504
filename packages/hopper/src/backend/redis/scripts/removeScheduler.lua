--[[ removeScheduler: deletes a job scheduler and its pending occurrence (if it has not started;
  occurrences already running or finished are left alone).
  KEYS: schedulers, schedDue, delayed, events, meta
  ARGV: base, id
  Returns: 1 removed, 0 no such scheduler. ]]
--@include base
--@include pending

local base = argv.base
local sk = base .. 's:' .. argv.id
local pid = redis.call('HGET', sk, 'pid')
if redis.call('EXISTS', sk) == 0 then return 0 end
if isWaitingOccurrence(base, pid) then
  redis.call('ZREM', k.delayed, pid)
  deleteJob(base, pid)
end
redis.call('DEL', sk, base .. 'sf:' .. argv.id)
redis.call('ZREM', k.schedulers, argv.id)
redis.call('ZREM', k.schedDue, argv.id)
emit(k.events, eventsCap(k.meta), 'scheduler-removed', 'schedulerId', argv.id)
return 1
