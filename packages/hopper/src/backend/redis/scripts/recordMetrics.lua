--[[ recordMetrics: adds a worker's per-minute counts of finished jobs (completed or failed) to
  the queue's metrics, in BullMQ's layout. `meta` holds the total `count`, the minute being filled
  (`prevTS`: when its first job finished) and the total when it began (`prevCount`); `data` holds
  one point per closed minute, newest first, at most maxDataPoints. A bucket whose minute is after
  the open one closes it (pushing its count, then a 0 per empty minute between) and opens its
  own; a bucket for the open minute or an older one (another worker's flush went first) is
  counted in the open minute.
  KEYS: meta, data
  ARGV: maxDataPoints, ...buckets
  Returns: 1 (buckets: minute, first finish time (ms), count, per bucket, oldest minute first; at
  most 300 buckets per call)
  Codes: an error reply for malformed arguments, before anything is written ]]
--@include chunked

local maxPoints = tonumber(argv.maxDataPoints)
local values = {}
for i = REST, #ARGV do
  local v = tonumber(ARGV[i])
  if v == nil then return redis.error_reply('ERR recordMetrics: bucket values must be numbers') end
  values[#values + 1] = v
end
if maxPoints == nil or maxPoints < 1 or #values % 3 ~= 0 or #values > 900 then
  return redis.error_reply('ERR recordMetrics: expected maxDataPoints >= 1 and at most 300 (minute, first, count) triples')
end

local f = redis.call('HMGET', k.meta, 'count', 'prevTS', 'prevCount')
local count = tonumber(f[1]) or 0
local prevTS = tonumber(f[2])
local prevCount = tonumber(f[3]) or 0
local pushed = false

for i = 1, #values, 3 do
  local minute, first, n = values[i], values[i + 1], values[i + 2]
  if prevTS == nil then
    prevTS, prevCount = first, count
  elseif minute > math.floor(prevTS / 60000) then
    local points = math.min(minute - math.floor(prevTS / 60000), maxPoints)
    redis.call('LPUSH', k.data, count - prevCount)
    local zeros = points - 1
    if zeros > 0 then
      local batch = {}
      for j = 1, zeros do batch[j] = 0 end
      chunked('LPUSH', k.data, batch)
    end
    pushed = true
    prevTS, prevCount = first, count
  end
  count = count + n
end

if pushed then redis.call('LTRIM', k.data, 0, maxPoints - 1) end
redis.call('HSET', k.meta, 'count', count, 'prevTS', prevTS, 'prevCount', prevCount)
return 1
