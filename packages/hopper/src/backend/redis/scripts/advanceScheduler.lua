--[[ advanceScheduler: gives a scheduler its next occurrences, as planned in TypeScript (cron and
  time-zone rules, catch-up after downtime, jitter, limit). Guarded: it applies only if the
  scheduler's last instant is still `expectedLast` and it has no pending occurrence, so any number
  of processes may advance concurrently and each occurrence is created once; an instant at or
  before the last one is never created (a backward clock jump changes nothing).
  An occurrence already due (a catch-up run; a new `every` schedule's first one, whose slot has
  begun) is judged at once as if promoted (includes/scheduler: overlap, catch-up) and made ready,
  waking a blocked worker. A pending occurrence made ready this way holds the scheduler (`hold`,
  as BullMQ plans a scheduler's next job when a worker takes the current one): it advances again
  when a worker takes that job (see maintenance/scheduler-tick advanceTaken), or when the fire
  after it falls due (`after`: its score in schedDue), whichever comes first.
  Scheduler hash fields: spec, tpl (template JSON), hash, ov/cu/cw (overlap, catch-up policy and
  window), limit, paused, last (last instant created), after (when the fire after `last` is
  due, jitter included), pid (pending occurrence id), run/buf (latest run, buffered run), inst
  (pending instant), due (its due time), prev (the last instant before the pending one: restored
  if the pending is withdrawn), hold (while pid is ready and untaken: when the hold ends, ms or
  +inf; else ''; the scheduler's score in schedulers is then that time, for workers' timers),
  counters fired, skipped, missed, created, createdAt.
  KEYS: schedulers, schedDue, delayed, events, meta, marker, wait, prio, prioCounter
  ARGV: now, base, id, expectedLast, missed, after, ...occurrences
    occurrences: 3 values each, ascending: instant, due (instant + jitter, never before now),
      pending (1 for the one that waits for its time; 0 for catch-up ones, due now).
  Returns: { created, again } (again 1: its pending occurrence, due at once, was dropped by its
    overlap policy, or its instant has a job already: advance it again now); 0 nothing to do;
    -1 no such scheduler; -2 someone else advanced it. ]]
--@include base
--@include pending
--@include occurrence
--@include scheduler

local now = nowMs(argv.now)
local base = argv.base
local schedId = argv.id
local sk = base .. 's:' .. schedId
local s = redis.call('HMGET', sk, 'tpl', 'last', 'paused', 'pid', 'created', 'hold')
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
if s[6] and s[6] ~= '' and pendingRunOf(base, s[4]) then
  local holdUntil = s[6] == '+inf' and math.huge or tonumber(s[6])
  if now < holdUntil then
    -- Its pending occurrence is ready and no worker has taken it yet: the next one waits for
    -- that, or for the next fire's due time.
    redis.call('ZADD', k.schedDue, s[6], schedId)
    return 0
  end
end
local tpl = decodeTemplate(s[1])
local last = tonumber(s[2]) or -1
local created, ids, names, states, dues = 0, {}, {}, {}, {}
local pendingId, pendingDue, pendingInstant = '', '+inf', ''
-- The occurrences already due, judged once the scheduler's fields are written.
local dueNow, pendingDueNow, pendingExisted = {}, false, false
-- The last instant before the pending one: where the schedule resumes if the pending occurrence
-- is withdrawn (pause, changed spec) before it runs.
local prev = s[2] or ''
for i = REST, #ARGV, 3 do
  local instant, due, pending = tonumber(ARGV[i]), tonumber(ARGV[i + 1]), ARGV[i + 2] == '1'
  if instant > last then
    local id = 'sched:' .. schedId .. ':' .. instant
    local made = redis.call('EXISTS', jobKey(base, id)) == 0
    if made then
      created = created + 1
      -- The iteration number BullMQ puts in opts.repeat.count: occurrences created so far, from 1.
      local count = tpl.countBase + (tonumber(s[5]) or 0) + created
      local state = createOccurrence(k, base, id, schedId, instant, due, now, tpl, false, count)
      ids[created] = id
      names[created] = tpl.name
      states[created] = state
      dues[created] = due
      if due <= now then
        dueNow[#dueNow + 1] = { id, due }
        if pending then pendingDueNow = true end
      end
    end
    if pending and made then
      prev = last >= 0 and tostring(last) or ''
      pendingId, pendingDue, pendingInstant = id, due, instant
    elseif pending then
      -- Its job exists already (a removed scheduler of the same id ran that instant): an
      -- instant runs once, so the scheduler plans again after it.
      pendingExisted = true
    end
    last = instant
  end
end
redis.call('HSET', sk, 'pid', pendingId, 'inst', pendingInstant, 'due', pendingDue, 'after', argv.after, 'prev', prev, 'hold', '')
if last >= 0 then redis.call('HSET', sk, 'last', last) end
if created > 0 then redis.call('HINCRBY', sk, 'created', created) end
if tonumber(argv.missed) > 0 then redis.call('HINCRBY', sk, 'missed', tonumber(argv.missed)) end
redis.call('ZADD', k.schedulers, pendingDue, schedId)
local cap = eventsCap(k.meta)
emitBatch(k.events, cap, 'added', ids, 'names', cjson.encode(names), 'states', cjson.encode(states), 'delays', cjson.encode(dues))
-- The ones already due are promoted now, judged as any due occurrence (in instant order).
local pendingKept = false
for i = 1, #dueNow do
  local id = dueNow[i][1]
  redis.call('ZREM', k.delayed, id)
  local kept = fireOccurrence(k, base, id, jobKey(base, id), schedId, tpl.priority, dueNow[i][2], now, cap)
  if id == pendingId then pendingKept = kept end
end
if #dueNow > 0 then signalWork(k.marker) end
if pendingDueNow and pendingKept then
  -- Held until a worker takes it, or until the fire after it is due: that is when the
  -- scheduler's next occurrence is due (its score in schedulers, which workers' ticks wake for).
  local holdUntil = argv.after ~= '' and argv.after or '+inf'
  redis.call('HSET', sk, 'hold', holdUntil)
  redis.call('ZADD', k.schedulers, holdUntil, schedId)
  if argv.after ~= '' then redis.call('ZADD', k.schedDue, argv.after, schedId) else redis.call('ZREM', k.schedDue, schedId) end
elseif pendingDueNow or pendingExisted then
  -- Dropped at once (its overlap policy), or its instant had run already: the scheduler needs
  -- its next occurrence now.
  redis.call('HSET', sk, 'pid', '')
  redis.call('ZADD', k.schedDue, now, schedId)
  return { created, 1 }
else
  redis.call('ZREM', k.schedDue, schedId)
end
return { created, 0 }
