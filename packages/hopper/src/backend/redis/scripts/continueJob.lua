--[[ continueJob: adds the next turn of a loop of unknown length (`job.continueWith`) and records
  the add as a durable step of the current job, in one step: a replayed turn (retry, rescue,
  dead-letter replay) finds the step and adds nothing, even after retention removed earlier turns.
  Fenced to the current attempt.
  KEYS: meta, wait, prio, prioCounter, events, marker
  ARGV: now, base, id, token, attempt, stepKey, nextId, name, data, opts, priority
  Returns: { code, step record } — code 1 added (or already added: the stored record names the
    next turn's id), -1 job missing, -2 stale token or attempt. ]]
--@include base
--@include fence

local now = nowMs(argv.now)
local base = argv.base
local jk = jobKey(base, argv.id)
local code = checkFence(jk, argv.token, argv.attempt)
if code ~= 1 then return { code, '' } end
local sk = stepsKey(base, argv.id)
local existing = redis.call('HGET', sk, argv.stepKey)
if existing and string.sub(existing, 1, 5) == '{"v":' then return { 1, existing } end
local nextId = argv.nextId
local njk = jobKey(base, nextId)
if redis.call('EXISTS', njk) == 0 then
  local priority = tonumber(argv.priority) or 0
  local fields = { 'n', argv.name, 't', now }
  local group = groupOfOpts(argv.opts)
  if group then fields[#fields + 1] = 'g'; fields[#fields + 1] = group end
  if argv.opts ~= '' then fields[#fields + 1] = 'o'; fields[#fields + 1] = argv.opts end
  if priority > 0 then fields[#fields + 1] = 'p'; fields[#fields + 1] = priority end
  dataFields(base, nextId, argv.data, fields)
  chunked('HSET', njk, fields, 2)
  local state = pushReady(k, njk, nextId, priority, false, group or false)
  signalWork(k.marker)
  local cap = eventsCap(k.meta)
  if state == 'waiting' then
    emitBatch(k.events, cap, 'added', { nextId }, 'names', cjson.encode({ argv.name }))
  else
    emitBatch(k.events, cap, 'added', { nextId }, 'names', cjson.encode({ argv.name }), 'states', cjson.encode({ state }),
      'delays', cjson.encode({ 0 }))
  end
end
local record = '{"v":' .. cjson.encode(nextId) .. ',"ms":0,"at":' .. now .. '}'
redis.call('HSET', sk, argv.stepKey, record)
return { 1, record }
