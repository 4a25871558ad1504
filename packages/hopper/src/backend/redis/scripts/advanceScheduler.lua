--[[ advanceScheduler: gives a scheduler its next occurrences, as planned in TypeScript (cron and
  time-zone rules, catch-up after downtime, jitter, limit). Guarded: it applies only if the
  scheduler's last instant is still `expectedLast` and it has no pending occurrence, so any number
  of processes may advance concurrently and each occurrence is created once; an instant at or
  before the last one is never created (a backward clock jump changes nothing).
  Scheduler hash fields: spec, tpl (template JSON), hash, ov/cu/cw (overlap, catch-up policy and
  window), limit, paused, last (last instant created), after (when the fire after `last` is
  due, jitter included), pid (pending occurrence id), run/buf (latest run, buffered run), inst
  (pending instant), prev (the last instant before the pending one: restored if the pending is
  withdrawn), counters fired, skipped, missed, created, createdAt.
  KEYS: schedulers, schedDue, delayed, events, meta, marker
  ARGV: now, base, id, expectedLast, missed, after, ...occurrences
    occurrences: 3 values each, ascending: instant, due (instant + jitter, never before now),
      pending (1 for the one that waits for its time; 0 for catch-up ones, due now).
  Returns: number created; 0 nothing to do; -1 no such scheduler; -2 someone else advanced it. ]]
--@include base
--@include pending
--@include occurrence

local now = nowMs(argv.now)
local base = argv.base
local schedId = argv.id
local sk = base .. 's:' .. schedId
local s = redis.call('HMGET', sk, 'tpl', 'last', 'paused', 'pid', 'created')
if not s[1] then
  redis.call('ZREM', k.schedDue, schedId)
  return -1
end
if s[3] == '1' then
  redis.call('ZREM', k.schedDue, schedId)
  return 0
end
if (s[2] or '') ~= argv.expectedLast then return -2 end
if isWaitingOccurrence(base, s[4]) then
  -- Its pending occurrence is still waiting for its time: nothing to advance.
  redis.call('ZREM', k.schedDue, schedId)
  return 0
end
local tpl = decodeTemplate(s[1])
local last = tonumber(s[2]) or -1
local created, ids, names, states, dues = 0, {}, {}, {}, {}
local pendingId, pendingDue, pendingInstant = '', '+inf', ''
-- The last instant before the pending one: where the schedule resumes if the pending occurrence
-- is withdrawn (pause, changed spec) before it runs.
local prev = s[2] or ''
for i = REST, #ARGV, 3 do
  local instant, due, pending = tonumber(ARGV[i]), tonumber(ARGV[i + 1]), ARGV[i + 2] == '1'
  if instant > last then
    local id = 'sched:' .. schedId .. ':' .. instant
    if redis.call('EXISTS', jobKey(base, id)) == 0 then
      created = created + 1
      -- The iteration number BullMQ puts in opts.repeat.count: occurrences created so far, from 1.
      local count = tpl.countBase + (tonumber(s[5]) or 0) + created
      local state = createOccurrence(k, base, id, schedId, instant, due, now, tpl, false, count)
      ids[created] = id
      names[created] = tpl.name
      states[created] = state
      dues[created] = due
    end
    if pending then
      prev = last >= 0 and tostring(last) or ''
      pendingId, pendingDue, pendingInstant = id, due, instant
    end
    last = instant
  end
end
redis.call('HSET', sk, 'pid', pendingId, 'inst', pendingInstant, 'after', argv.after, 'prev', prev)
if last >= 0 then redis.call('HSET', sk, 'last', last) end
if created > 0 then redis.call('HINCRBY', sk, 'created', created) end
if tonumber(argv.missed) > 0 then redis.call('HINCRBY', sk, 'missed', tonumber(argv.missed)) end
redis.call('ZADD', k.schedulers, pendingDue, schedId)
redis.call('ZREM', k.schedDue, schedId)
emitBatch(k.events, eventsCap(k.meta), 'added', ids, 'names', cjson.encode(names), 'states', cjson.encode(states), 'delays', cjson.encode(dues))
return created
