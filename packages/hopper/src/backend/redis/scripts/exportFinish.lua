--[[ exportFinish: deletes jobs of the way back's moving set once BullMQ holds them (`hopper migrate
  --to-bullmq`): releases each one's deduplication id, detaches it from its parent (which stops
  waiting for it), and deletes its keys. An id no longer in the moving set is skipped, so a
  re-sent call is harmless.
  KEYS: moving, info
  Flags: allow-oom (it frees memory)
  ARGV: now, base, ...ids
  Returns: the number of jobs finished.
  Codes: none. ]]
--@include base
--@include remove

local now = nowMs(argv.now)
local base = argv.base
local todo = {}
for i = REST, #ARGV do
  if redis.call('ZSCORE', k.moving, ARGV[i]) then todo[#todo + 1] = ARGV[i] end
end
for _, id in ipairs(todo) do
  if redis.call('EXISTS', jobKey(base, id)) == 1 then discardJob(base, id, now) end
  redis.call('ZREM', k.moving, id)
  redis.call('HDEL', k.info, id)
end
return #todo
