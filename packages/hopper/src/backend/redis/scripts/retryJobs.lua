--[[ retryJobs: moves finished jobs (failed, or completed) back to ready: up to `count` of them,
  finished at or before `timestamp`, or exactly the given ids. Call again until it returns 0.
  A retry lifts a cancellation: the job's cancel mark (`cx`) is cleared, so the retry runs.
  A retried child whose parent still exists and recorded its outcome (its failure in `fc:`, or
  its result in `pr:`) is pending for that parent again (as in BullMQ): the parent's record of
  it is dropped and it is back in the parent's `dp:` set, whatever the parent's state.
  KEYS: meta, wait, prio, prioCounter, source, events, marker
  ARGV: base, state, count, timestamp, resetAttemptsMade, resetAttemptsStarted, ...ids
    source: the completed or failed set, matching `state`.
  Returns: the number of jobs moved (with ids: 1 per moved id, in order; 0 for an id not in `state`). ]]
--@include base
--@include flow

local base = argv.base

-- Child `id` (link `link`) runs again: it is pending for its parent again if the parent recorded it.
local function restoreDependency(id, link)
  local pb, pid = parseLink(link)
  if redis.call('EXISTS', jobKey(pb, pid)) == 0 then return end
  local ck = publicKey(base, id)
  local record = failedChildrenKey(pb, pid)
  if argv.state == 'completed' then record = processedKey(pb, pid) end
  if redis.call('HDEL', record, ck) == 1 then redis.call('SADD', depsKey(pb, pid), ck) end
end

local ids = {}
local explicit = #ARGV >= REST
if explicit then
  for i = REST, #ARGV do ids[#ids + 1] = ARGV[i] end
else
  ids = redis.call('ZRANGEBYSCORE', k.source, '-inf', argv.timestamp, 'LIMIT', 0, tonumber(argv.count))
end
local cap = eventsCap(k.meta)
local moved = 0
local out = {}
for i = 1, #ids do
  local id = ids[i]
  local jk = jobKey(base, id)
  if redis.call('HGET', jk, 's') == argv.state and redis.call('ZREM', k.source, id) == 1 then
    redis.call('HDEL', jk, 'fo', 'po', 'rv', 'fr', 'cx')
    if argv.resetAttemptsMade == '1' then redis.call('HDEL', jk, 'am') end
    if argv.resetAttemptsStarted == '1' then redis.call('HDEL', jk, 'as', 'sc') end
    local f = redis.call('HMGET', jk, 'p', 'pl')
    local state = pushReady(k, jk, id, tonumber(f[1]) or 0, false)
    if f[2] and isParentLink(f[2]) then restoreDependency(id, f[2]) end
    emit(k.events, cap, 'waiting', 'jobId', id, 'prev', argv.state, 'state', state)
    moved = moved + 1
    out[#out + 1] = 1
  else
    out[#out + 1] = 0
  end
end
if moved > 0 then signalWork(k.marker) end
if explicit then return out end
return moved
