--[[ base: helpers every script needs: the clock, events, job keys, job data, ready structures.
  Scripts receive `base` (the queue's key prefix, ending with ':'); a job's keys are
  base .. 'j:' .. id (hash), base .. 'd:' .. id (large data), base .. 'l:' .. id (log list):
  separate namespaces, since custom ids may contain ':'. All share the queue's {hash tag},
  so they live in one Redis Cluster slot. ]]

-- One clock: a test passes `now` (ms); production passes '' and Redis TIME decides.
local function nowMs(arg)
  if arg ~= nil and arg ~= '' then return tonumber(arg) end
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

local function jobKey(base, id)
  return base .. 'j:' .. id
end

local function dataKey(base, id)
  return base .. 'd:' .. id
end

local function logsKey(base, id)
  return base .. 'l:' .. id
end

-- Events go to a capped stream in the same script that changes state. The cap lives in the
-- queue's meta hash (set by the Queue), read once per script call.
local function eventsCap(metaKey)
  return tonumber(redis.call('HGET', metaKey, 'maxEvents')) or 10000
end

local function emit(eventsKey, cap, event, ...)
  redis.call('XADD', eventsKey, 'MAXLEN', '~', cap, '*', 'event', event, ...)
end

-- Redis keeps a hash compact (listpack) only while every value is <= 64 bytes: data larger
-- than that lives in its own string key so the job hash stays small.
local INLINE_DATA_MAX = 64

local function writeData(base, id, jk, data)
  if #data <= INLINE_DATA_MAX then
    redis.call('HSET', jk, 'd', data)
  else
    redis.call('SET', dataKey(base, id), data)
  end
end

local function readData(base, id, inline)
  if inline then return inline end
  return redis.call('GET', dataKey(base, id)) or 'null'
end

local function deleteJob(base, id)
  redis.call('DEL', jobKey(base, id), dataKey(base, id), logsKey(base, id))
end

-- Wakes one idle worker blocked on the marker list. At most one marker is kept: a woken
-- worker that leaves work behind pushes it again (see claimJobs), waking the next one.
local function signalWork(markerKey)
  if redis.call('LLEN', markerKey) == 0 then
    redis.call('RPUSH', markerKey, '1')
  end
end

-- Priority order: lower priority first, FIFO within a priority. The score packs the priority
-- (<= 2^21) above a 32-bit counter, which fits a double's 53-bit mantissa exactly.
local PRIO_SHIFT = 4294967296

local function pushPrioritized(k, id, priority)
  local counter = redis.call('INCR', k.prioCounter) % PRIO_SHIFT
  redis.call('ZADD', k.prio, priority * PRIO_SHIFT + counter, id)
end

-- Puts a job in the ready structure for its priority and records the state on the job.
-- `front` puts a waiting job at the head (rescued jobs run next); `lifo` likewise for adds.
local function pushReady(k, jk, id, priority, front)
  if priority > 0 then
    pushPrioritized(k, id, priority)
    redis.call('HSET', jk, 's', 'prioritized')
    return 'prioritized'
  end
  if front then
    redis.call('LPUSH', k.wait, id)
  else
    redis.call('RPUSH', k.wait, id)
  end
  redis.call('HSET', jk, 's', 'waiting')
  return 'waiting'
end

-- Schedules a delayed job; wakes idle workers if it is now the earliest, so they re-arm their timer.
local function pushDelayed(k, jk, id, due)
  redis.call('ZADD', k.delayed, due, id)
  redis.call('HSET', jk, 's', 'delayed')
  local first = redis.call('ZRANGE', k.delayed, 0, 0)
  if first[1] == id then signalWork(k.marker) end
end

local function isPaused(metaKey)
  return redis.call('HEXISTS', metaKey, 'paused') == 1
end
