--[[ exportTake: takes up to `count` jobs of one structure of this queue, in the order they would
  run, into the way back's moving set (`hopper migrate --to-bullmq`): out of every structure, so
  no worker here claims them, their keys kept until they are written to BullMQ and exportFinish
  deletes them. A scheduler's pending run is left (its scheduler moves it: exportTakePending).
  KEYS: source, moving, info, seq
    source: wait (a list, taken from its head), prio / delayed / failed / completed / a group's
      queue (sorted sets, lowest score first), or active (only jobs whose lock deadline passed:
      stalled, no worker can finish them any more).
  ARGV: now, base, kind, state, offset, count, group
    kind: 'list', 'zset' or 'active'; state: what the job was ('waiting', 'prioritized',
    'delayed', 'failed', 'completed', 'stalled'); offset: entries skipped before these in this
    pass; group: the group whose queue `source` is ('' for none).
  Returns: { examined, taken ids..., '|', skipped ids... }; examined 0: nothing left to look at.
  Codes: none. ]]
--@include base
--@include groups
--@include pending

local now = nowMs(argv.now)
local base, kind, state = argv.base, argv.kind, argv.state
local offset, count = tonumber(argv.offset), tonumber(argv.count)
local entries = {}
if kind == 'list' then
  local ids = redis.call('LRANGE', k.source, offset, offset + count - 1)
  for i = 1, #ids do entries[#entries + 1] = { ids[i], '' } end
elseif kind == 'zset' then
  local r = redis.call('ZRANGE', k.source, offset, offset + count - 1, 'WITHSCORES')
  for i = 1, #r, 2 do entries[#entries + 1] = { r[i], r[i + 1] } end
else
  local r = redis.call('ZRANGEBYSCORE', k.source, '-inf', now, 'WITHSCORES', 'LIMIT', offset, count)
  for i = 1, #r, 2 do entries[#entries + 1] = { r[i], r[i + 1] } end
end
-- Read phase: which entries to take.
local take, skipped = {}, {}
for _, e in ipairs(entries) do
  if redis.call('EXISTS', jobKey(base, e[1])) == 1 and pendingRunOf(base, e[1]) then
    skipped[#skipped + 1] = e[1]
  else
    take[#take + 1] = e
  end
end
local out = { #entries }
for _, e in ipairs(take) do
  local id, score = e[1], e[2]
  local removed
  if kind == 'list' then removed = redis.call('LREM', k.source, 1, id) else removed = redis.call('ZREM', k.source, id) end
  local jk = jobKey(base, id)
  if removed == 1 and redis.call('EXISTS', jk) == 1 then
    if kind == 'active' then
      -- Its holder's lock is gone: a late write of that attempt is refused as stale (fence).
      redis.call('HDEL', jk, 'tk')
      groups().leaveActive(base, jk)
    end
    redis.call('ZADD', k.moving, redis.call('INCR', k.seq), id)
    redis.call('HSET', k.info, id, cjson.encode({ s = state, sc = score, g = argv.group }))
    out[#out + 1] = id
  end
end
out[#out + 1] = '|'
for _, id in ipairs(skipped) do out[#out + 1] = id end
return out
