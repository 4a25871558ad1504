--[[ initQueue: records a queue's settings when a Queue starts: the events stream cap, the key
  layout version, and the queue's epoch: a random id set once, so that a dataset reset (flush,
  restart without persistence) shows as a changed or missing epoch instead of an empty queue.
  KEYS: meta
  Flags: allow-oom (a Queue or Worker starting on a full Redis must start, to drain it: this writes
    at most four fields of one hash)
  ARGV: maxEvents, layoutVersion, epoch, childFailure
    maxEvents: -1 leaves the stored cap (workers and readers do not set it).
    childFailure: 'fail' or 'wait' (what a child failing for good with no policy of its own does
      to this queue's parents, stored as cfp), '' leaves it.
  Returns: { stored epoch, 1 if this call created it } ]]

if tonumber(argv.maxEvents) >= 0 then redis.call('HSET', k.meta, 'maxEvents', argv.maxEvents) end
if argv.childFailure ~= '' then redis.call('HSET', k.meta, 'cfp', argv.childFailure) end
redis.call('HSETNX', k.meta, 'v', argv.layoutVersion)
local created = redis.call('HSETNX', k.meta, 'epoch', argv.epoch)
return { redis.call('HGET', k.meta, 'epoch'), created }
