--[[ rescueStalled: returns jobs whose lock deadline has passed to ready, or fails them once
  they have stalled more than maxStalledCount times. Runs at most once per interval across
  all workers (a check key), and trims events older than the stream's age cap.
  A stalled job that was cancelled while active ends failed as cancelled (includes/cancel).
  Bounded: at most `limit` (<= 500) jobs per call, so the retention trim it triggers (at most two
  finished jobs per failed job) stays bounded too; the caller calls again while a call returns a
  full batch. Counts outcomes per job name (includes/counters): stalled (each rescue), failed,
  cancelled, dead-lettered. Reads every job it handles before its first write.
  KEYS: meta, wait, prio, prioCounter, active, failed, events, marker, stalledCheck
  Flags: allow-oom (a full Redis must still give the jobs of a crashed worker back, or fail them, as
    `fail` does: refused, they stayed active until memory was freed; it moves jobs that exist, at
    most `limit` per call)
  ARGV: now, base, maxStalledCount, limit, intervalMs, force, failKeep, eventsMaxAgeMs, queueName
    force: 1 runs even if another worker checked within the interval (used by tests and tools).
    failKeep: retention spec for jobs failed here (their own removeOnFail is in their opts).
  Returns: { now, ran (0/1), rescued ids count, failed ids count, then rescued ids...,
    failed ids..., then the number of expired jobs this call looked at } ]]
--@include base
--@include retention
--@include remove
--@include deadletter
--@include flow
--@include cancel
--@include counters

local now = nowMs(argv.now)
local base = argv.base
local limit = math.min(tonumber(argv.limit), 500)
local maxStalled = tonumber(argv.maxStalledCount)
-- Reads first: the expired jobs and their fields.
if argv.force ~= '1' and redis.call('EXISTS', k.stalledCheck) == 1 then return { now, 0, 0, 0 } end
local cap = eventsCap(k.meta)
local expired = redis.call('ZRANGEBYSCORE', k.active, '-inf', now, 'LIMIT', 0, limit)
local fields = {}
for i = 1, #expired do
  fields[i] = redis.call('HMGET', jobKey(base, expired[i]), 's', 'sc', 'g', 'ga', 'am', 'o', 'pl', 'p', 'cx', 'n')
end
-- Then the writes.
if argv.force ~= '1' then redis.call('SET', k.stalledCheck, now, 'PX', argv.intervalMs) end
local rescued, failed = {}, {}
local fin = newFinisher(base, k.failed, now)
local rel = {}
for i = 1, #expired do
  local id = expired[i]
  local jk = jobKey(base, id)
  local f = fields[i]
  redis.call('ZREM', k.active, id)
  if f[1] then
    local stalls = (tonumber(f[2]) or 0) + 1
    redis.call('HSET', jk, 'sc', stalls)
    redis.call('HDEL', jk, 'tk')
    noteRelease(rel, f[3], f[4])
    if f[9] then
      -- Cancelled while it ran: it ends as cancelled, not back in line.
      endCancelled(fin, base, k.events, cap, jk, id, failKeepOf(f[6], argv.failKeep), { f[9], f[5], f[7] }, now, true)
      failed[#failed + 1] = id
      countOutcome('cancelled', f[10])
    elseif stalls > maxStalled then
      local reason = 'job stalled more than allowable limit'
      local made = (tonumber(f[5]) or 0) + 1
      local keep = failKeepOf(f[6], argv.failKeep)
      releaseDedup(base, jk, id, now)
      if deadLetter(base, argv.queueName, id, jk, now, made, reason) then countOutcome('dead-lettered', f[10]) end
      countOutcome('stalled', f[10])
      countOutcome('failed', f[10])
      local kept = finish(fin, jk, id, keep, { 's', 'failed', 'fo', now, 'fr', reason, 'am', made })
      emit(k.events, cap, 'failed', 'jobId', id, 'failedReason', reason, 'prev', 'active', 'attemptsMade', made)
      notifyParent(base, id, f[7], 'failed', reason, now, not kept)
      failed[#failed + 1] = id
    else
      local state = pushReady(k, jk, id, tonumber(f[8]) or 0, true, f[3])
      emit(k.events, cap, 'stalled', 'jobId', id, 'prev', 'active')
      emit(k.events, cap, 'waiting', 'jobId', id, 'prev', 'active', 'state', state)
      rescued[#rescued + 1] = id
      countOutcome('stalled', f[10])
    end
  end
end
flushFinisher(fin)
flushReleases(base, rel)
flushCounts(base)
if #rescued + #failed > 0 then signalWork(k.marker) end
if tonumber(argv.eventsMaxAgeMs) > 0 then
  redis.call('XTRIM', k.events, 'MINID', '~', tostring(now - tonumber(argv.eventsMaxAgeMs)))
end
local out = { now, 1, #rescued, #failed }
for i = 1, #rescued do out[#out + 1] = rescued[i] end
for i = 1, #failed do out[#out + 1] = failed[i] end
out[#out + 1] = #expired
return out
