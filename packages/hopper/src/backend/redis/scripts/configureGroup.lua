--[[ configureGroup: changes one group: its settings, or pauses or resumes it.
  KEYS: meta, marker
  ARGV: base, group, op, ...fields
    op: 'set' writes the settings in fields (pairs: name, value; an empty value removes the
      setting: c concurrency, lm/ld limiter max/duration ms, lwt '1' weighted limiter, ms maxSize,
      w weight); 'pause';
      'resume'.
  A group parked by a limit goes back to the ring after 'set' (the next claim judges it again
  under its new settings). Pausing a group that does not exist yet records it, paused. A group
  left idle with nothing to keep it (no job, no setting, not paused) is forgotten, as by a claim.
  Returns: 1 done; 0 nothing to do (pause: already paused; resume: not paused). ]]
--@include base
--@include settings

local base, g = argv.base, argv.group
local gk = groups().groupHashKey(base, g)
local status = redis.call('HGET', gk, 'st')

-- Puts the group back in the ring if it has a backlog; otherwise it is idle.
local function requeue()
  if redis.call('ZCARD', groups().groupQueueKey(base, g)) > 0 then
    groups().enableGroups(base)
    redis.call('HSET', gk, 'st', 'r')
    groups().pushRing(base, g)
    signalWork(k.marker)
  else
    redis.call('HDEL', gk, 'st')
  end
end

-- A group left without a status (no backlog) is idle: forgotten if nothing else holds it.
local function settle()
  if redis.call('HGET', gk, 'st') then return end
  local f = redis.call('HMGET', gk, 'a', 'c', 'lm', 'ms', 'w')
  groups().idleGroup(base, g, gk, tonumber(f[1]) or 0, groups().hasGroupSettings(f[2], f[3], f[4], f[5]))
end

-- Takes the group out of the ring, the rate-limited set or the parked set, whichever holds it.
local function unlink()
  if status == 'r' then groups().unlinkRing(base, g) end
  if status == 'l' then redis.call('ZREM', base .. 'gl', g) end
  if status == 'c' then redis.call('SREM', base .. 'gp', g) end
end

if argv.op == 'pause' then
  if status == 'p' then return 0 end
  unlink()
  redis.call('HSET', gk, 'st', 'p')
  redis.call('ZADD', base .. 'gs', 0, g)
  return 1
end
if argv.op == 'resume' then
  if status ~= 'p' then return 0 end
  requeue()
  settle()
  return 1
end
local set, del = fieldChanges(ARGV, REST)
if #set > 0 then
  chunked('HSET', gk, set, 2)
  redis.call('ZADD', base .. 'gs', 0, g)
end
-- A concurrency limit counts the group's jobs already running, so it holds from the next claim.
for i = 1, #set, 2 do
  if set[i] == 'c' then groups().countActive(base, g) end
end
if #del > 0 then chunked('HDEL', gk, del) end
if status == 'c' or status == 'l' or status == 'r' then
  -- Parked: back to the ring, judged again; in the ring: its member may change form.
  unlink()
  requeue()
end
settle()
return 1
