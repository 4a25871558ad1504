--[[ obliterate: destroys a queue and everything in it, in bounded steps. The first call
  (cursor 0) pauses the queue and, unless forced, refuses if jobs are active. Each call deletes
  up to `count` of the queue's keys (found with SCAN: every key of the queue is under `base`, in
  one slot); the meta key goes last, when the scan is complete, and is left holding only the
  queue's epoch: an obliteration is deliberate, so the processes still attached to the queue (its
  Queue, workers) must not take it for a dataset reset (a missing epoch) and report one.
  KEYS: meta, active, events
  Flags: allow-oom (it frees memory: it must run when Redis is full under maxmemory)
  ARGV: base, force, count, cursor
  Returns: { nextCursor ('0' when done), deleted } or { -1 } when active jobs block it. ]]

local base = argv.base
local epoch = redis.call('HGET', k.meta, 'epoch')
if argv.cursor == '0' then
  if argv.force ~= '1' and redis.call('ZCARD', k.active) > 0 then return { -1 } end
  redis.call('HSET', k.meta, 'paused', '1')
end
local pattern = string.gsub(base, '([%*%?%[%]\\])', '\\%1') .. '*'
local reply = redis.call('SCAN', argv.cursor, 'MATCH', pattern, 'COUNT', tonumber(argv.count))
local deleted = 0
for i = 1, #reply[2] do
  if reply[2][i] ~= k.meta then
    deleted = deleted + redis.call('DEL', reply[2][i])
  end
end
if reply[1] == '0' then
  deleted = deleted + redis.call('DEL', k.meta)
  if epoch then redis.call('HSET', k.meta, 'epoch', epoch) end
end
return { reply[1], deleted }
