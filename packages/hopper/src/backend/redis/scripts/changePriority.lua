--[[ changePriority: sets a job's priority; a waiting or prioritized job moves to its new place
  (with lifo: the head of the jobs of that priority, as in BullMQ), a delayed one keeps it for
  when it becomes ready.
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
  if argv.lifo == '1' and priority > 0 and not group then
    -- Counter 0: ahead of every job of that priority (pushReady's `front` is for waiting jobs).
    redis.call('ZADD', k.prio, priority * PRIO_SHIFT, argv.id)
    redis.call('HSET', jk, 's', 'prioritized')
  else
    pushReady(k, jk, argv.id, priority, argv.lifo == '1', group)
  end
  signalWork(k.marker)
elseif state ~= 'delayed' and state ~= 'waiting-children' then
  return -3
end
if priority > 0 then redis.call('HSET', jk, 'p', priority) else redis.call('HDEL', jk, 'p') end
return 1
