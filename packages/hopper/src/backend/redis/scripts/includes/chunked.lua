--[[ chunked: the only place a list becomes the arguments of a Redis command. Lua's `unpack`
  fails past about 8,000 values (its C stack), and Redis does not roll back a script that errors:
  a script that wrote something and then unpacks a long list leaves a half-done change. So every
  variadic command (SADD, ZADD, DEL, HDEL, ZREM, LPUSH, RPUSH, HSET, HMGET, ...) given a list goes
  through `chunked`, which sends it in calls of at most CHUNK values; `scripts/check-lua.mjs`
  (run by `npm run lint`) fails on `unpack(` anywhere else. A list of at most CHUNK values costs
  one call, as before. ]]

local CHUNK = 1000

-- Calls `cmd key values...` (or `cmd values...` when key is nil) over `values` in calls of at
-- most CHUNK values, keeping groups of `width` values (field/value or score/member pairs: 2)
-- together. Returns the sum of the replies when they are integers, their concatenation when they
-- are lists (HMGET), else the last reply. Nothing is sent for an empty list (returns 0).
-- `flag` (optional, with a key): one option word sent after the key in every call (ZADD's 'XX').
local function chunked(cmd, key, values, width, flag)
  local n = #values
  if n == 0 then return 0 end
  if flag ~= nil then
    local total = 0
    local step = CHUNK - CHUNK % (width or 1)
    for i = 1, n, step do
      total = total + redis.call(cmd, key, flag, unpack(values, i, math.min(i + step - 1, n)))
    end
    return total
  end
  if n <= CHUNK then
    if key == nil then return redis.call(cmd, unpack(values)) end
    return redis.call(cmd, key, unpack(values))
  end
  local step = CHUNK - CHUNK % (width or 1)
  local total = nil
  for i = 1, n, step do
    local j = math.min(i + step - 1, n)
    local reply
    if key == nil then reply = redis.call(cmd, unpack(values, i, j)) else reply = redis.call(cmd, key, unpack(values, i, j)) end
    if type(reply) == 'number' then
      total = (total or 0) + reply
    elseif type(reply) == 'table' and not reply.ok and not reply.err then
      total = total or {}
      for x = 1, #reply do total[#total + 1] = reply[x] end
    else
      total = reply
    end
  end
  return total
end
