--[[ sealParent: ends the chunked add of a large flow's parent: once every child exists, the
  parent may leave waiting-children (at once if no child is pending any more).
  KEYS: meta
    (the parent's queue; the other keys are derived from base, as in includes/flow)
  ARGV: now, base, id
  Returns: 1 sealed (and still waiting for children), 2 sealed and moved on, 0 already sealed,
    -1 no such job ]]
--@include base
--@include flow

local now = nowMs(argv.now)
local jk = jobKey(argv.base, argv.id)
local f = redis.call('HMGET', jk, 's', 'us')
if not f[1] then return -1 end
if not f[2] then return 0 end
redis.call('HDEL', jk, 'us')
releaseParent(argv.base, argv.id, now)
if redis.call('HGET', jk, 's') == 'waiting-children' then return 1 end
return 2
