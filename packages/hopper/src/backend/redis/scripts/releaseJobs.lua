--[[ releaseJobs: a closing worker gives back the active jobs it holds and will not finish (a
  force close, its close deadline passed, or the reply of a claim in flight arrived after close
  began): each goes back to the head of the ready jobs at once, for another worker, without
  counting a stall or spending an attempt (one whose processor never started here does not
  count as started either). A cancelled job ends failed as cancelled instead (includes/cancel; counted, includes/counters).
  Fenced: only the attempt's own token and attempt number release it. The caller sends at most
  500 jobs per call; reads every job before the first write.
  KEYS: meta, wait, prio, prioCounter, active, failed, events, marker
  ARGV: now, base, failKeep, ...jobs
    jobs: 4 values per job: id, token, attempt (attemptsStarted of the holder), started (1 its
      processor ran, 0 it never started)
    failKeep: retention spec for cancelled jobs that set no removeOnFail.
  Returns: { code per job }
  Codes: 1 released, 3 cancelled (ended failed as cancelled), -1 job missing, -2 stale token or
    attempt, -3 not active ]]
--@include base
--@include cancel
--@include counters

local now = nowMs(argv.now)
local base = argv.base
-- Reads first: each job's fields and its code.
local codes, fields = {}, {}
for i = REST, #ARGV, 4 do
  local n = #codes + 1
  local f = redis.call('HMGET', jobKey(base, ARGV[i]), 's', 'tk', 'as', 'p', 'g', 'ga', 'cx', 'am', 'pl', 'o', 'n')
  if not f[1] then
    codes[n] = -1
  elseif f[2] ~= ARGV[i + 1] or f[3] ~= ARGV[i + 2] then
    codes[n] = -2
  elseif f[1] ~= 'active' then
    codes[n] = -3
  elseif f[7] then
    codes[n] = 3
  else
    codes[n] = 1
  end
  fields[n] = f
end
-- Then the writes.
local cap = eventsCap(k.meta)
local fin = newFinisher(base, k.failed, now)
local rel = {}
local released = 0
for n = 1, #codes do
  if codes[n] > 0 then
    local i = REST + (n - 1) * 4
    local id, f, started = ARGV[i], fields[n], ARGV[i + 3] == '1'
    local jk = jobKey(base, id)
    redis.call('ZREM', k.active, id)
    redis.call('HDEL', jk, 'tk')
    noteRelease(rel, f[5], f[6])
    if not started then redis.call('HSET', jk, 'as', math.max((tonumber(f[3]) or 1) - 1, 0)) end
    if codes[n] == 3 then
      endCancelled(fin, base, k.events, cap, jk, id, failKeepOf(f[10], argv.failKeep), { f[7], f[8], f[9] }, now, started)
      countOutcome('cancelled', f[11])
    else
      local state = pushReady(k, jk, id, tonumber(f[4]) or 0, true, f[5])
      emit(k.events, cap, 'waiting', 'jobId', id, 'prev', 'active', 'state', state)
      released = released + 1
    end
  end
end
flushFinisher(fin)
flushReleases(base, rel)
flushCounts(base)
if released > 0 then signalWork(k.marker) end
return codes
