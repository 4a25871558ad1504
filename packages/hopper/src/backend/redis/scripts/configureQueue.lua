--[[ configureQueue: sets or removes queue-wide limits and group defaults in the queue's meta:
  gcc global concurrency, lmax/ldur rate limit (max jobs per duration ms), and the group
  defaults gcon concurrency, glm/gld rate limit (glw '1': weighted), gms maxSize, gwt weight.
  KEYS: meta, marker
  ARGV: ...fields
    fields: pairs name, value; an empty value removes the setting.
  Idle workers are woken: a raised limit may let them claim now. Groups parked under a default
  that changed (concurrency: `gp`; rate limit: `gl`) go back to the ring with a backlog, to be
  judged again at the next claim, as configureGroup does for one group (at most 1,000 per call:
  the others are judged when they next leave their parking).
  Returns: 1 ]]
--@include base
--@include settings

local set, del = fieldChanges(ARGV, REST)
if #set > 0 then chunked('HSET', k.meta, set, 2) end
-- A default group concurrency counts the grouped jobs already running (see includes/groups).
for i = 1, #set, 2 do
  if set[i] == 'gcon' and redis.call('HEXISTS', k.meta, 'gm') == 1 then groups().countActive(string.sub(k.meta, 1, #k.meta - 4), nil) end
end
if #del > 0 then chunked('HDEL', k.meta, del) end

local changed = {}
for i = 1, #set, 2 do changed[set[i]] = true end
for i = 1, #del do changed[del[i]] = true end
if (changed.gcon or changed.glm or changed.gld or changed.glw) and redis.call('HEXISTS', k.meta, 'gm') == 1 then
  local base = string.sub(k.meta, 1, #k.meta - 4)
  local function requeue(g)
    redis.call('HSET', groups().groupHashKey(base, g), 'st', 'r')
    groups().pushRing(base, g)
  end
  -- At most REQUEUE_MAX parked groups go back to the ring per call (bounded work): the others
  -- stay validly parked until their next job release (concurrency) or their window reopens (rate
  -- limit), when the claim judges them under the new settings.
  local REQUEUE_MAX = 1000
  if changed.gcon then
    -- A group parked with no backlog stays in `gp`: the release of its last job makes it idle.
    for _, g in ipairs(redis.call('SRANDMEMBER', base .. 'gp', REQUEUE_MAX)) do
      if redis.call('ZCARD', groups().groupQueueKey(base, g)) > 0 then
        redis.call('SREM', base .. 'gp', g)
        requeue(g)
      end
    end
  end
  if changed.glm or changed.gld or changed.glw then
    local limited = redis.call('ZRANGE', base .. 'gl', 0, REQUEUE_MAX - 1)
    if #limited > 0 then
      chunked('ZREM', base .. 'gl', limited)
      for i = 1, #limited do requeue(limited[i]) end
    end
  end
end
signalWork(k.marker)
return 1
