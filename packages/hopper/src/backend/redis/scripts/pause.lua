--[[ pause: stops every worker of the queue from claiming jobs; active jobs finish. Adds go on.
  KEYS: meta, events
  ARGV: (none)
  Returns: 1 if the queue was running, 0 if it was already paused. ]]
--@include base

if redis.call('HSETNX', k.meta, 'paused', '1') == 0 then return 0 end
emit(k.events, eventsCap(k.meta), 'paused')
return 1
