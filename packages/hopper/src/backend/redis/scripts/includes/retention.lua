--[[ retention: keeps or removes a finished job per its spec, trimming the finished set.
  spec: 'k' keep all, 'r' remove now, or 'c<count>a<ageMs>' (either may be -1 for no limit).
  Trimming removes at most 2 old jobs per finished job, so a call's work stays bounded
  (DESIGN: retention trims at most twice the number of jobs a call finished). ]]

local function parseKeep(spec)
  if spec == 'k' then return -1, -1 end
  if spec == 'r' then return 0, -1 end
  local c, a = string.match(spec, '^c(-?%d+)a(-?%d+)$')
  return tonumber(c), tonumber(a)
end

local function removeSetMembers(base, setKey, ids)
  for i = 1, #ids do
    redis.call('ZREM', setKey, ids[i])
    deleteJob(base, ids[i])
  end
end

-- Finishes job `id` into `setKey` (completed or failed) at `now` under `spec`: writes its final
-- `fields` (a flat field/value list) and keeps it, or deletes it. Returns true if kept.
local function finishInto(base, setKey, jk, id, now, spec, fields)
  local count, age = parseKeep(spec)
  if count == 0 then
    deleteJob(base, id)
    return false
  end
  redis.call('HSET', jk, unpack(fields))
  redis.call('ZADD', setKey, now, id)
  if count > 0 then
    local excess = redis.call('ZCARD', setKey) - count
    if excess > 0 then
      local old = redis.call('ZRANGE', setKey, 0, math.min(excess, 2) - 1)
      removeSetMembers(base, setKey, old)
    end
  end
  if age >= 0 then
    local old = redis.call('ZRANGEBYSCORE', setKey, '-inf', now - age, 'LIMIT', 0, 2)
    removeSetMembers(base, setKey, old)
  end
  return redis.call('EXISTS', jk) == 1
end
