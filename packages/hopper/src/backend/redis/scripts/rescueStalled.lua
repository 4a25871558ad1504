--[[ rescueStalled: returns jobs whose lock deadline has passed to ready, or fails them once
  they have stalled more than maxStalledCount times. Runs at most once per interval across
  all workers (a check key), and trims events older than the stream's age cap.
  KEYS: meta, wait, prio, prioCounter, active, failed, events, marker, stalledCheck
  ARGV: now, base, maxStalledCount, limit, intervalMs, force, failKeep, eventsMaxAgeMs, queueName
    force: 1 runs even if another worker checked within the interval (used by tests and tools).
    failKeep: retention spec for jobs failed here (their own removeOnFail is in their opts).
  Returns: { now, ran (0/1), rescued ids count, failed ids count, then rescued ids..., failed ids... } ]]
--@include base
--@include retention
--@include remove
--@include deadletter
--@include flow

local now = nowMs(argv.now)
local base = argv.base
if argv.force ~= '1' then
  if not redis.call('SET', k.stalledCheck, now, 'NX', 'PX', argv.intervalMs) then
    return { now, 0, 0, 0 }
  end
end
local cap = eventsCap(k.meta)
local maxStalled = tonumber(argv.maxStalledCount)
local rescued, failed = {}, {}
local fin = newFinisher(base, k.failed, now)
local rel = {}
local expired = redis.call('ZRANGEBYSCORE', k.active, '-inf', now, 'LIMIT', 0, tonumber(argv.limit))
for i = 1, #expired do
  local id = expired[i]
  local jk = jobKey(base, id)
  redis.call('ZREM', k.active, id)
  if redis.call('EXISTS', jk) == 1 then
    local stalls = redis.call('HINCRBY', jk, 'sc', 1)
    redis.call('HDEL', jk, 'tk')
    local gf = redis.call('HMGET', jk, 'g', 'ga')
    local group = gf[1]
    noteRelease(rel, group, gf[2])
    if stalls > maxStalled then
      local reason = 'job stalled more than allowable limit'
      local f = redis.call('HMGET', jk, 'am', 'o', 'pl')
      local made = (tonumber(f[1]) or 0) + 1
      local keep = failKeepOf(f[2], argv.failKeep)
      releaseDedup(base, jk, id)
      deadLetter(base, argv.queueName, id, jk, now, made, reason)
      finish(fin, jk, id, keep, { 's', 'failed', 'fo', now, 'fr', reason, 'am', made })
      emit(k.events, cap, 'failed', 'jobId', id, 'failedReason', reason, 'prev', 'active', 'attemptsMade', made)
      notifyParent(base, id, f[3], 'failed', reason, now)
      failed[#failed + 1] = id
    else
      local state = pushReady(k, jk, id, tonumber(redis.call('HGET', jk, 'p')) or 0, true, group)
      emit(k.events, cap, 'stalled', 'jobId', id, 'prev', 'active')
      emit(k.events, cap, 'waiting', 'jobId', id, 'prev', 'active', 'state', state)
      rescued[#rescued + 1] = id
    end
  end
end
flushFinisher(fin)
flushReleases(base, rel)
if #rescued + #failed > 0 then signalWork(k.marker) end
if tonumber(argv.eventsMaxAgeMs) > 0 then
  redis.call('XTRIM', k.events, 'MINID', '~', tostring(now - tonumber(argv.eventsMaxAgeMs)))
end
local out = { now, 1, #rescued, #failed }
for i = 1, #rescued do out[#out + 1] = rescued[i] end
for i = 1, #failed do out[#out + 1] = failed[i] end
return out
