--[[ continueJob: adds the next turn of a loop of unknown length (`job.continueWith`) and records
  the add as a durable step of the current job, in one step: a replayed turn (retry, rescue,
  dead-letter replay) finds the step and adds nothing, even after retention removed earlier turns.
  Fenced to the current attempt.
  The turns form a run (`run`: hash run:<runId>, runId = the loop's id): `l` its latest turn, `c`
  its cost so far (reportCost; seeded from this job's `rc` when the run starts), `cr` the reason
  it was cancelled (cancelRun). A cancelled run adds no turn; with `maxCost`, a run whose cost
  reached it adds none either. The run expires RUN_TTL after its last change.
  KEYS: meta, wait, prio, prioCounter, events, marker, delayed, run
  ARGV: now, base, id, token, attempt, stepKey, nextId, name, data, opts, priority, delay, lifo, runId, maxCost
    delay: ms before the next turn is ready (0: now); lifo: 1 to put it first in line.
    maxCost: '' for none.
  Returns: { code, step record } — code 1 added (or already added: the stored record names the
    next turn's id), -1 job missing, -2 stale token or attempt; { -5, reason } the run was
    cancelled; { -7, cost } the run's cost reached maxCost; { -8, '' } the next turn's id is held
    by a job that is not a turn of this run. ]]
--@include base
--@include fence

-- How long a run's record outlives its last change (30 days).
local RUN_TTL = 2592000000

local now = nowMs(argv.now)
local base = argv.base
local jk = jobKey(base, argv.id)
local code = checkFence(jk, argv.token, argv.attempt)
if code ~= 1 then return { code, '' } end
local sk = stepsKey(base, argv.id)
local existing = redis.call('HGET', sk, argv.stepKey)
if existing and string.sub(existing, 1, 5) == '{"v":' then return { 1, existing } end
local run = redis.call('HMGET', k.run, 'cr', 'c')
if run[1] then return { -5, run[1] } end
local runCost = tonumber(run[2]) or tonumber(redis.call('HGET', jk, 'rc')) or 0
if argv.maxCost ~= '' and runCost >= tonumber(argv.maxCost) then return { -7, tostring(runCost) } end
local nextId = argv.nextId
local njk = jobKey(base, nextId)
local taken = redis.call('EXISTS', njk) == 1
-- A job of another run (or none) holds the next turn's id: refused, nothing written.
if taken and redis.call('HGET', njk, 'ru') ~= argv.runId then return { -8, '' } end
if not taken then
  local priority = tonumber(argv.priority) or 0
  local fields = { 'n', argv.name, 't', now, 'ru', argv.runId }
  local group = groupOfOpts(argv.opts)
  if group then fields[#fields + 1] = 'g'; fields[#fields + 1] = group end
  if argv.opts ~= '' then fields[#fields + 1] = 'o'; fields[#fields + 1] = argv.opts end
  if priority > 0 then fields[#fields + 1] = 'p'; fields[#fields + 1] = priority end
  dataFields(base, nextId, argv.data, fields)
  local delay = tonumber(argv.delay) or 0
  if delay > 0 then
    fields[#fields + 1] = 'dl'; fields[#fields + 1] = delay
  end
  chunked('HSET', njk, fields, 2)
  local state, due = 'delayed', 0
  if delay > 0 then
    due = now + delay
    pushDelayed(k, njk, nextId, due)
  else
    state = pushReady(k, njk, nextId, priority, argv.lifo == '1', group or false)
    signalWork(k.marker)
  end
  local cap = eventsCap(k.meta)
  if state == 'waiting' then
    emitBatch(k.events, cap, 'added', { nextId }, 'names', cjson.encode({ argv.name }))
  else
    emitBatch(k.events, cap, 'added', { nextId }, 'names', cjson.encode({ argv.name }), 'states', cjson.encode({ state }),
      'delays', cjson.encode({ due }))
  end
end
local record = '{"v":' .. cjson.encode(nextId) .. ',"ms":0,"at":' .. now .. '}'
redis.call('HSET', sk, argv.stepKey, record)
-- `sx`: the job has a key besides its hash (includes/base removedKeys).
redis.call('HSET', jk, 'sx', '1')
redis.call('HSET', k.run, 'l', nextId, 'c', runCost)
redis.call('PEXPIRE', k.run, RUN_TTL)
return { 1, record }
