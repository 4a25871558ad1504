--[[ changePriority: sets a job's priority (and lifo for priority 0); a waiting or prioritized
  job moves to its new place, a delayed one keeps it for when it becomes ready.
  KEYS: meta, wait, prio, prioCounter, events, marker
  ARGV: base, id, priority, lifo
  Returns: 1 done; -1 job missing; -3 the job is active or finished ]]
--@include base

local jk = jobKey(argv.base, argv.id)
local state = redis.call('HGET', jk, 's')
if not state then return -1 end
local priority = tonumber(argv.priority)
if state == 'waiting' or state == 'prioritized' then
  local group = redis.call('HGET', jk, 'g')
  if group then
    groups().unqueueGrouped(argv.base, argv.id, group)
  elseif state == 'waiting' then
    redis.call('LREM', k.wait, 1, argv.id)
  else
    redis.call('ZREM', k.prio, argv.id)
  end
  pushReady(k, jk, argv.id, priority, argv.lifo == '1', group)
  signalWork(k.marker)
elseif state ~= 'delayed' and state ~= 'waiting-children' then
  return -3
end
if priority > 0 then redis.call('HSET', jk, 'p', priority) else redis.call('HDEL', jk, 'p') end
return 1
