--[[ resume: lets the workers of a paused queue claim jobs again, and wakes an idle one.
  KEYS: meta, events, marker
  ARGV: (none)
  Returns: 1 if the queue was paused, 0 if it was running. ]]
--@include base

if redis.call('HDEL', k.meta, 'paused') == 0 then return 0 end
signalWork(k.marker)
emit(k.events, eventsCap(k.meta), 'resumed')
return 1
