--[[ releaseOrphans: after a reconnect, puts back jobs held under the caller's worker id that the
  worker does not know (claimed by a call whose reply was lost), without counting a stall.
  Walks the active set by rank in bounded chunks: call again with the returned cursor until -1.
  KEYS: meta, wait, prio, prioCounter, active, events, marker
  ARGV: base, workerId, cursor, limit, ...known
    known: ids of the jobs the worker is running.
  Returns: { nextCursor (-1 when done), released count } ]]
--@include base

local base = argv.base
local owner = argv.workerId .. ':'
local known = {}
for i = REST, #ARGV do known[ARGV[i]] = true end
local start = tonumber(argv.cursor)
local limit = tonumber(argv.limit)
local ids = redis.call('ZRANGE', k.active, start, start + limit - 1)
local cap = eventsCap(k.meta)
local released = 0
for i = 1, #ids do
  local id = ids[i]
  local jk = jobKey(base, id)
  local f = redis.call('HMGET', jk, 'tk', 'as', 'p', 'g', 'ga')
  if f[1] and not known[id] and string.sub(f[1], 1, #owner) == owner then
    redis.call('ZREM', k.active, id)
    redis.call('HDEL', jk, 'tk')
    redis.call('HSET', jk, 'as', math.max((tonumber(f[2]) or 1) - 1, 0))
    if f[4] and f[5] == '1' then groups().releaseGroup(base, f[4], 1) end
    local state = pushReady(k, jk, id, tonumber(f[3]) or 0, true, f[4])
    emit(k.events, cap, 'waiting', 'jobId', id, 'prev', 'active', 'state', state)
    released = released + 1
  end
end
if released > 0 then signalWork(k.marker) end
local nextCursor = -1
if #ids == limit then nextCursor = start + limit - released end
return { nextCursor, released }
