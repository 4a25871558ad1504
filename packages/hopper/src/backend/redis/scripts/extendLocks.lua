--[[ extendLocks: renews the locks a worker holds, in one call per worker per interval.
  KEYS: active
  ARGV: now, base, lockMs, ...locks
    locks: 2 values per job: id, token
  Returns: { now, lost job ids... } — jobs whose lock the caller no longer holds (rescued as
    stalled, removed, or finished by another attempt); the worker aborts their signals. ]]
--@include base

local now = nowMs(argv.now)
local deadline = now + tonumber(argv.lockMs)
local out = { now }
for i = REST, #ARGV, 2 do
  local id, token = ARGV[i], ARGV[i + 1]
  if redis.call('HGET', jobKey(argv.base, id), 'tk') == token then
    redis.call('ZADD', k.active, 'XX', deadline, id)
  else
    out[#out + 1] = id
  end
end
return out
