--[[ deadletter: when a job fails for good (attempts exhausted, UnrecoverableError, too many
  stalls) and its options name a dead-letter queue, the same script adds a dead letter there: a
  waiting job with id <origin queue>:<origin id>:<attempts started>, carrying the origin's name,
  data, options (`oo`), attempts made, failed reason and stack traces, its parent link if it is a
  child (`opl`), and its origin (`oq`, `oid`) and timestamps (`ot` added, `opo` last started, `ofo` failed). Cancelled jobs are never
  dead-lettered. The dead-letter queue's keys are derived from this queue's base: in Redis Cluster
  both queues must share a hash tag (the Queue refuses other set-ups at add). ]]

-- The base of queue `other`, a sibling of the queue whose base is `base` and name `name`.
local function siblingBase(base, name, other)
  local tagged = '{' .. name .. '}:'
  if string.sub(base, -#tagged) == tagged then
    return string.sub(base, 1, #base - #tagged) .. '{' .. other .. '}:'
  end
  return string.sub(base, 1, #base - #name - 1) .. other .. ':'
end

-- The dead-letter queue named in a job's options, or nil.
local function deadLetterQueueOf(opts)
  if not opts or opts == '' then return nil end
  local ok, decoded = pcall(cjson.decode, opts)
  if not ok or type(decoded) ~= 'table' or type(decoded.deadLetter) ~= 'table' then return nil end
  local queue = decoded.deadLetter.queue
  if type(queue) ~= 'string' or queue == '' then return nil end
  return queue
end

-- Reads where the dead letter of job `id` would go, before the caller writes anything: false
-- when there is none (no queue named, a cancelled job, or already dead-lettered), else the route.
-- The dead-letter queue's keys are probed with pcall: one this script cannot reach (another Redis
-- Cluster slot, set up by a path that did not check) gives a route marked `unreachable` instead
-- of failing the script after its first write.
local function deadLetterRoute(base, queueName, id, jk)
  local f = redis.call('HMGET', jk, 'n', 'd', 'dc', 'o', 't', 'as', 'po', 'st', 'cx', 'pl')
  if f[9] then return false end
  local dlq = deadLetterQueueOf(f[4])
  if not dlq then return false end
  local dbase = siblingBase(base, queueName, dlq)
  local dlId = queueName .. ':' .. id .. ':' .. (f[6] or '0')
  local djk = jobKey(dbase, dlId)
  local exists = redis.pcall('EXISTS', djk)
  if type(exists) == 'table' then return { dlq = dlq, unreachable = tostring(exists.err) } end
  if exists == 1 then return false end
  return { f = f, dlq = dlq, dbase = dbase, dlId = dlId, djk = djk }
end

-- Adds the dead letter of job `id` (failed for good at `now`) if its options name a queue.
-- `route`: as read by deadLetterRoute before the caller's first write (nil: read it now). An
-- unreachable queue gets no dead letter: the job fails for good where it is, and the queue's
-- events say why (`dead-letter-failed`). Returns the job's name when a dead letter was added, else nil.
local function deadLetter(base, queueName, id, jk, now, made, reason, route)
  if route == nil then route = deadLetterRoute(base, queueName, id, jk) end
  if not route then return nil end
  if route.unreachable then
    emit(base .. 'events', eventsCap(base .. 'meta'), 'dead-letter-failed', 'jobId', id, 'deadLetterQueue', route.dlq,
      'reason', route.unreachable)
    return nil
  end
  local f, dlq, dbase, dlId, djk = route.f, route.dlq, route.dbase, route.dlId, route.djk
  -- The stack traces as they are now (the caller may have added this attempt's since).
  f[8] = redis.call('HGET', jk, 'st')
  local fields = { 'n', f[1], 't', now, 's', 'waiting', 'fr', reason, 'am', made, 'oq', queueName, 'oid', id,
    'ot', f[5] or now, 'ofo', now }
  if f[4] then fields[#fields + 1] = 'oo'; fields[#fields + 1] = f[4] end
  if f[7] then fields[#fields + 1] = 'opo'; fields[#fields + 1] = f[7] end
  if f[8] then fields[#fields + 1] = 'st'; fields[#fields + 1] = f[8] end
  -- A child keeps its parent link (`opl`): replayed, its completion still counts.
  if f[10] then fields[#fields + 1] = 'opl'; fields[#fields + 1] = f[10] end
  dataFields(dbase, dlId, readData(base, id, jk, f[2], f[3]), fields)
  -- The recorded steps travel with the dead letter, so a replay does not repeat their effects.
  local steps = redis.call('HGETALL', stepsKey(base, id))
  if #steps > 0 then fields[#fields + 1] = 'sx'; fields[#fields + 1] = '1' end
  chunked('HSET', djk, fields, 2)
  if #steps > 0 then chunked('HSET', stepsKey(dbase, dlId), steps, 2) end
  redis.call('RPUSH', dbase .. 'wait', dlId)
  signalWork(dbase .. 'marker')
  local cap = eventsCap(dbase .. 'meta')
  redis.call('XADD', dbase .. 'events', 'MAXLEN', '~', cap, '*', 'event', 'added', 'ids', cjson.encode({ dlId }),
    'names', cjson.encode({ f[1] }))
  emit(base .. 'events', eventsCap(base .. 'meta'), 'dead-lettered', 'jobId', id, 'deadLetterQueue', dlq, 'deadLetterId', dlId)
  return f[1] or ''
end
