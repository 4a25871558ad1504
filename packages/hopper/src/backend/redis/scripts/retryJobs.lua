--[[ retryJobs: moves finished jobs (failed, or completed) back to ready: up to `count` of them,
  finished at or before `timestamp`, or exactly the given ids. Call again until it returns 0.
  A retry lifts a cancellation: the job's cancel mark (`cx`) is cleared, so the retry runs.
  KEYS: meta, wait, prio, prioCounter, source, events, marker
  ARGV: base, state, count, timestamp, resetAttemptsMade, resetAttemptsStarted, ...ids
    source: the completed or failed set, matching `state`.
  Returns: the number of jobs moved (with ids: 1 per moved id, in order; 0 for an id not in `state`). ]]
--@include base

local base = argv.base
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
    local state = pushReady(k, jk, id, tonumber(redis.call('HGET', jk, 'p')) or 0, false)
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
