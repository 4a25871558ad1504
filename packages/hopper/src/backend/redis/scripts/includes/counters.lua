--[[ counters: exact outcome counters per job name, for Prometheus (docs/metrics.md). A script
  notes outcomes in a Lua table while it runs (`countOutcome`) and writes them once at its end
  (`flushCounts`): one HINCRBY per distinct (outcome, name) per call, however many jobs the call
  finished. The queue's `mc` hash holds `<outcome>:<name>` -> count. Label cardinality is bounded:
  `mn` admits at most 50 job names per queue (the first seen, when jobs are added or at their first
  outcome); the others are counted under the name `other`. A field seen for the first time
  (HINCRBY returns the call's own count) checks its name's admission: only then are more commands
  sent (at most four), so the steady state costs one command per distinct (outcome, name) per call.
  A name refused admission pays those checks on every call that counts it, and one HEXISTS and one
  HLEN per add call (documented in docs/metrics.md).
  Per call: resetCounts() (in the Redis Functions library this state lives as long as the library:
    a call that failed after noting outcomes must not hand them to the next call) ]]

local COUNTER_NAMES_MAX = 50
local COUNTER_OTHER = 'other'
-- Outcomes noted so far: `[true]` holds the calling queue's (the base given to flushCounts),
-- other keys a queue base's own (a parent failed in another queue of its flow).
local counted = {}
local countedAny = false

-- Forgets the outcomes noted so far (run at the start of every call; see "Per call" above).
local function resetCounts()
  if not countedAny then return end
  counted = {}
  countedAny = false
end

-- Notes `by` (default 1) jobs of job name `name` with outcome `outcome` (completed, failed,
-- retried, stalled, rate-limited, deduplicated, cancelled, timed-out, dead-lettered). `onBase`:
-- the key prefix of the queue the job belongs to when it is not the calling script's queue.
local function countOutcome(outcome, name, by, onBase)
  local field = outcome .. ':' .. (name or '')
  local slot = onBase or true
  local fields = counted[slot]
  if not fields then
    fields = {}
    counted[slot] = fields
  end
  fields[field] = (fields[field] or 0) + (by or 1)
  countedAny = true
end

-- Names a call admits at most: a bulk add of many names admits the others at their first outcome.
local ADMIT_PER_CALL = 4

-- Admits the first few distinct job names of `list` (the names of the jobs a call added) to the
-- queue's metrics names while there is room, so that exporters show every outcome's series at 0
-- before the name's first outcome (Prometheus sees an increase only from a series it has seen).
-- Costs one HEXISTS per distinct name checked; an HSET only the first time a name is seen.
local function admitNames(base, list)
  local nk = base .. 'mn'
  local seen, checked = {}, 0
  for i = 1, #list do
    local name = list[i]
    if not seen[name] then
      seen[name] = true
      checked = checked + 1
      if checked > ADMIT_PER_CALL then return end
      if name ~= COUNTER_OTHER and redis.call('HEXISTS', nk, name) == 0 then
        if redis.call('HLEN', nk) >= COUNTER_NAMES_MAX then return end
        redis.call('HSET', nk, name, 1)
      end
    end
  end
end

-- Adds `by` to counter `field` of the queue at `b`, admitting its job name (see above).
local function addCount(b, field, by)
  local ck, nk = b .. 'mc', b .. 'mn'
  if redis.call('HINCRBY', ck, field, istr(by)) == by then
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

-- Writes the outcomes noted so far to the queues' counters (`base`: the calling queue's key prefix).
local function flushCounts(base)
  if not countedAny then return end
  for slot, fields in pairs(counted) do
    local b = slot == true and base or slot
    for field, by in pairs(fields) do addCount(b, field, by) end
  end
  resetCounts()
end
