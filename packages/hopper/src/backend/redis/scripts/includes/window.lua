--[[ window: a sliding window that sums weights (weighted rate limits, tenant budgets).
  A window is a sorted set of entries (score: the time the weight was taken; member:
  '<id>:<weight>', the weight after the last ':') and a string key holding the sum of the
  entries' weights, so reading the use is O(1) plus the entries that left the window since the
  last trim. Expired entries are read and trimmed at most WINDOW_TRIM_MAX per call (bounded
  work); the ones left over still count until a later call trims them, so the use read is never
  below the truth (a limit is never exceeded, at worst a job waits a little longer). ]]

local WINDOW_TRIM_MAX = 1000

-- The weight recorded in a window entry.
local function entryWeight(member)
  return tonumber(string.match(member, ':([^:]*)$')) or 0
end

-- Reads a window without writing: the use (sum of weights taken after now - duration) and the
-- expired entries to trim with windowTrim (at most WINDOW_TRIM_MAX) with their total weight.
local function windowUse(zkey, sumKey, now, duration)
  local sum = tonumber(redis.call('GET', sumKey)) or 0
  local expired = redis.call('ZRANGEBYSCORE', zkey, '-inf', now - duration, 'LIMIT', 0, WINDOW_TRIM_MAX)
  local freed = 0
  for i = 1, #expired do freed = freed + entryWeight(expired[i]) end
  local use = sum - freed
  -- Every entry left: nothing is in use (not the float residue of the sum's additions).
  if use < 0 or (#expired > 0 and #expired == redis.call('ZCARD', zkey)) then use = 0 end
  return use, expired, freed
end

-- Removes the expired entries windowUse returned; an emptied window resets its sum to 0 (no
-- float drift carried over).
local function windowTrim(zkey, sumKey, expired, freed)
  if #expired == 0 then return end
  chunked('ZREM', zkey, expired)
  if redis.call('EXISTS', zkey) == 0 then
    redis.call('DEL', sumKey)
  else
    redis.call('INCRBYFLOAT', sumKey, -freed)
  end
end

-- A weight as the one string every script stores it as: in a window entry's member, in the sum's
-- INCRBYFLOAT, in a job's `bc` (its charge). Joining a number to a string formats it with '%.14g'
-- and redis.call with '%.17g': a decimal cost (2.3) would differ between the two ('2.3' and
-- '2.2999999999999998'), and reportCost would not find the entry to correct. Integers as '%d'.
local function weightStr(w)
  if w % 1 == 0 and w >= -9007199254740992 and w <= 9007199254740992 then return string.format('%d', w) end
  return string.format('%.17g', w)
end

-- Records weight `w` taken now by `id` (member '<id>:<w>'); both keys live for the window's
-- duration. Returns the member and the weight's string (weightStr).
local function windowAdd(zkey, sumKey, now, duration, id, w)
  local ws = weightStr(w)
  local member = id .. ':' .. ws
  redis.call('ZADD', zkey, now, member)
  redis.call('INCRBYFLOAT', sumKey, ws)
  redis.call('PEXPIRE', zkey, duration)
  redis.call('PEXPIRE', sumKey, duration)
  return member, ws
end

-- When the window, holding `use`, has room for `w` more under `max` (ms from now; 0 if it has
-- room now). Walks the oldest entries (at most 100): past them, it answers the time the 100th
-- leaves, when the caller looks again.
local function windowRoomIn(zkey, now, duration, use, w, max)
  if use + w <= max then return 0 end
  local oldest = redis.call('ZRANGE', zkey, 0, 99, 'WITHSCORES')
  local at = now
  for i = 1, #oldest, 2 do
    use = use - entryWeight(oldest[i])
    at = tonumber(oldest[i + 1])
    if use + w <= max then break end
  end
  return math.max(at + duration - now, 1)
end

-- A job's weight under a weighted rate limit: its `cost` option (in its options' JSON), else 1.
local function jobCost(opts)
  if not opts or not string.find(opts, '"cost":', 1, true) then return 1 end
  return tonumber(string.match(opts, '[{,]"cost":([%d%.eE%+%-]+)')) or 1
end
