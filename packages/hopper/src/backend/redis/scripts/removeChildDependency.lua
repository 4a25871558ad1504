--[[ removeChildDependency: lets a pending child's parent go of it (BullMQ's
  job.removeChildDependency): the child stays as it is but no longer has a parent, and the
  parent no longer waits for it (it moves on if that was its last pending child). The child's
  options keep the `parent` it was added with; its parent link (`pl`), which every script reads,
  is deleted. Nothing changes for a child that is not pending any more (finished, or already let
  go of). The parent lives in the child's slot (flows across queues share a hash tag).
  KEYS: job, events
    The child's hash and its queue's events: they route the call to the child's Cluster slot.
  ARGV: now, base, id
  Returns: 1 removed; 0 the child has no parent or is not pending for it; -1 child missing;
    -3 parent missing ]]
--@include base
--@include flow

-- Reads first.
local link = redis.call('HGET', k.job, 'pl')
if link == false then
  if redis.call('EXISTS', k.job) == 0 then return -1 end
  return 0
end
local pb, pid = parseLink(link)
if redis.call('EXISTS', jobKey(pb, pid)) == 0 then return -3 end
if redis.call('SISMEMBER', depsKey(pb, pid), publicKey(argv.base, argv.id)) == 0 then return 0 end
-- Then the writes.
redis.call('HDEL', k.job, 'pl')
childRemoved(argv.base, argv.id, pb, pid, nowMs(argv.now))
return 1
