--[[ runScheduled: makes ready now, outside the schedule, occurrences of a job scheduler: one for
  `triggerJobScheduler` (instant = now), or past instants for `backfillJobScheduler`. Backfill
  uses the regular occurrence ids and skips an instant that already has a job or is in the
  scheduler's bounded record of fired instants, so it never repeats a run that happened. These
  runs do not move the scheduler's last instant and are not judged by overlap. A numbered call
  (seq) is applied once (includes/requests): a trigger ioredis re-sent after its reply was lost
  (a few ms later, so a new trigger id) returns the first call's ids instead of running again.
  KEYS: schedulers, delayed, events, meta, marker, wait, prio, prioCounter, requests
  ARGV: now, base, id, trigger, seq, keep, ...instants
    trigger: 1 for a trigger (id sched:<id>:trigger:<now>), 0 for backfill.
    seq, keep: the caller's call number ('' = not numbered) and how many results to remember.
  Returns: { created ids... } or -1 when there is no such scheduler. ]]
--@include base
--@include occurrence
--@include requests

local previous = previousResult(k.requests, argv.seq)
if previous then return previous end
local now = nowMs(argv.now)
local base = argv.base
local schedId = argv.id
local sk = base .. 's:' .. schedId
local raw = redis.call('HGET', sk, 'tpl')
if not raw then return -1 end
local tpl = decodeTemplate(raw)
local fk = base .. 'sf:' .. schedId
local out = {}
local instants = {}
if argv.trigger == '1' then
  instants[1] = now
else
  for i = REST, #ARGV do instants[#instants + 1] = tonumber(ARGV[i]) end
end
local names, states = {}, {}
for i = 1, #instants do
  local instant = instants[i]
  local id = 'sched:' .. schedId .. ':' .. instant
  if argv.trigger == '1' then id = 'sched:' .. schedId .. ':trigger:' .. instant end
  local firedBefore = argv.trigger ~= '1' and redis.call('ZSCORE', fk, instant)
  if redis.call('EXISTS', jobKey(base, id)) == 0 and not firedBefore then
    local state = createOccurrence(k, base, id, schedId, instant, now, now, tpl, true)
    if argv.trigger ~= '1' then redis.call('ZADD', fk, instant, instant) end
    redis.call('HSET', sk, 'run', id)
    redis.call('HINCRBY', sk, 'fired', 1)
    out[#out + 1] = id
    names[#names + 1] = tpl.name
    states[#states + 1] = state
  end
end
local dues = {}
for i = 1, #out do dues[i] = 0 end
emitBatch(k.events, eventsCap(k.meta), 'added', out, 'names', cjson.encode(names), 'states', cjson.encode(states), 'delays', cjson.encode(dues))
recordResult(k.requests, argv.seq, argv.keep, out)
return out
