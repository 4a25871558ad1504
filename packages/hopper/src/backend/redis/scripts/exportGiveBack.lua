--[[ exportGiveBack: puts jobs of the way back's moving set back where they were taken from
  (`hopper migrate --to-bullmq` refused them): a ready or stalled job at the head of its line
  (its group's queue for a grouped job), a delayed, failed or completed one at its score.
  KEYS: moving, info, wait, prio, prioCounter, delayed, failed, completed, marker
  ARGV: base, ...ids
  Returns: the number given back.
  Codes: none. ]]
--@include base
--@include groups

local base = argv.base
local back = {}
for i = REST, #ARGV do
  local id = ARGV[i]
  local info = redis.call('HGET', k.info, id)
  if redis.call('ZSCORE', k.moving, id) and info then back[#back + 1] = { id, cjson.decode(info) } end
end
local ready = false
-- In reverse, so that ready jobs pushed to the head keep the order they were taken in.
for i = #back, 1, -1 do
  local id, info = back[i][1], back[i][2]
  local jk = jobKey(base, id)
  redis.call('ZREM', k.moving, id)
  redis.call('HDEL', k.info, id)
  if redis.call('EXISTS', jk) == 1 then
    local s = info.s
    if s == 'waiting' or s == 'prioritized' or s == 'stalled' then
      pushReady(k, jk, id, tonumber(redis.call('HGET', jk, 'p')) or 0, true, nil)
      ready = true
    elseif s == 'delayed' or s == 'scheduled' then
      redis.call('ZADD', k.delayed, info.sc, id)
      ready = true
    elseif s == 'failed' then
      redis.call('ZADD', k.failed, info.sc, id)
    else
      redis.call('ZADD', k.completed, info.sc, id)
    end
  end
end
if ready then signalWork(k.marker) end
return #back
