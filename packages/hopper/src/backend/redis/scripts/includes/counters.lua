--[[ counters: exact outcome counters per job name, for Prometheus (docs/metrics.md). A script
  notes outcomes in a Lua table while it runs (`countOutcome`) and writes them once at its end
  (`flushCounts`): one HINCRBY per distinct (outcome, name) per call, however many jobs the call
  finished. The queue's `mc` hash holds `<outcome>:<name>` -> count. Label cardinality is bounded:
  `mn` admits at most 50 job names per queue (the first seen); the others are counted under the
  name `other`. A field seen for the first time (HINCRBY returns the call's own count) checks its
  name's admission: only then are more commands sent (at most four), so the steady state costs
  one command per distinct (outcome, name) per call. A name refused admission pays those checks
  on every call that counts it (documented in docs/metrics.md).
  Per call: resetCounts() (in the Redis Functions library this state lives as long as the library:
    a call that failed after noting outcomes must not hand them to the next call) ]]

local COUNTER_NAMES_MAX = 50
local COUNTER_OTHER = 'other'
local counted = {}
local countedAny = false

-- Forgets the outcomes noted so far (run at the start of every call; see "Per call" above).
local function resetCounts()
  if not countedAny then return end
  counted = {}
  countedAny = false
end

-- Notes `by` (default 1) jobs of job name `name` with outcome `outcome` (completed, failed,
-- retried, stalled, rate-limited, deduplicated, cancelled, timed-out, dead-lettered).
local function countOutcome(outcome, name, by)
  local field = outcome .. ':' .. (name or '')
  counted[field] = (counted[field] or 0) + (by or 1)
  countedAny = true
end

-- Writes the outcomes noted so far to the queue's counters (`base`: the queue's key prefix).
local function flushCounts(base)
  if not countedAny then return end
  local ck, nk = base .. 'mc', base .. 'mn'
  for field, by in pairs(counted) do
    if redis.call('HINCRBY', ck, field, by) == by then
      local sep = string.find(field, ':', 1, true)
      local name = string.sub(field, sep + 1)
      if name ~= COUNTER_OTHER and redis.call('HEXISTS', nk, name) == 0 then
        if redis.call('HLEN', nk) < COUNTER_NAMES_MAX then
          redis.call('HSET', nk, name, 1)
        else
          redis.call('HDEL', ck, field)
          redis.call('HINCRBY', ck, string.sub(field, 1, sep) .. COUNTER_OTHER, by)
        end
      end
    end
  end
  resetCounts()
end
