--[[ removeOrphanedJobs: deletes the jobs among the given ids whose hash exists but which the
  structure their state names does not hold (a grouped ready job: its group's queue). Hopper's
  scripts never leave such a job (the invariant audit checks it); this is BullMQ's migration
  helper, kept for compatibility and for data damaged outside Hopper. An orphan's keys are
  deleted as job.remove() deletes them (its deduplication key is released and its parent let
  go of). The caller sends at most 1,000 ids per call (found with SCAN); reads every job before
  the first write. A waiting job is looked up with LPOS, linear in the waiting list.
  KEYS: wait, prio, delayed, active, completed, failed, waitingChildren
  ARGV: now, base, max, ...ids
    max: the most orphans to remove in this call (0 = no limit).
  Returns: the ids removed ]]
--@include base
--@include remove

local now = nowMs(argv.now)
local base = argv.base
-- Reads first: which ids are orphans.
local orphans = {}
local max = tonumber(argv.max)
for i = REST, #ARGV do
  if max > 0 and #orphans >= max then break end
  local id = ARGV[i]
  local f = redis.call('HMGET', jobKey(base, id), 's', 'g')
  local state, group = f[1], f[2]
  if state then
    local held
    if group and (state == 'waiting' or state == 'prioritized') then
      held = redis.call('ZSCORE', base .. 'gq:' .. group, id) ~= false
    else
      local key, kind = structureOf(k, state)
      if kind == 'list' then
        held = redis.call('LPOS', key, id) ~= false
      elseif kind == 'zset' then
        held = redis.call('ZSCORE', key, id) ~= false
      else
        held = false
      end
    end
    if not held then orphans[#orphans + 1] = id end
  end
end
-- Then the writes.
for i = 1, #orphans do
  discardJob(base, orphans[i], now)
end
return orphans
