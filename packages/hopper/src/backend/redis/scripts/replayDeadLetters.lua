--[[ replayDeadLetters: puts dead letters' original jobs back into their origin queues, under
  their original ids, with fresh attempts, and removes the dead letters, atomically per dead
  letter. An origin job that still exists in a state other than failed is left alone and the
  dead letter kept (refused); a failed one is replaced. Replaying a dead letter that is gone does
  nothing, so replaying twice creates one job.
  KEYS: meta, wait, completed, failed, events
    (this dead-letter queue's; the origin queue's keys are derived from its name, same slot)
  ARGV: now, base, queueName, ...ids
  Returns: one code per id: 1 replayed, 0 no such dead letter, -4 refused (the origin job
    exists and is not failed), -5 the dead letter is active, delayed or prioritized (being
    handled: retry when it is waiting or finished), -6 not a dead letter. ]]
--@include base
--@include deadletter

local now = nowMs(argv.now)
local base = argv.base
local out = {}
for i = REST, #ARGV do
  local id = ARGV[i]
  local jk = jobKey(base, id)
  local f = redis.call('HMGET', jk, 's', 'oq', 'oid', 'n', 'd', 'dc', 'oo', 'ot', 'opl')
  local code = 1
  if not f[1] then
    code = 0
  elseif not f[2] then
    code = -6
  elseif f[1] ~= 'waiting' and f[1] ~= 'completed' and f[1] ~= 'failed' then
    code = -5
  else
    local obase = siblingBase(base, argv.queueName, f[2])
    local ojk = jobKey(obase, f[3])
    local ostate = redis.call('HGET', ojk, 's')
    if ostate and ostate ~= 'failed' then
      code = -4
    else
      if ostate == 'failed' then
        redis.call('ZREM', obase .. 'failed', f[3])
        deleteJob(obase, f[3])
      end
      local fields = { 'n', f[4], 't', f[8] or now, 's', 'waiting' }
      if f[7] then fields[#fields + 1] = 'o'; fields[#fields + 1] = f[7] end
      if f[9] then fields[#fields + 1] = 'pl'; fields[#fields + 1] = f[9] end
      local group = groupOfOpts(f[7])
      if group then fields[#fields + 1] = 'g'; fields[#fields + 1] = group end
      dataFields(obase, f[3], readData(base, id, jk, f[5], f[6]), fields)
      -- Recorded steps come back with the job: their effects are not repeated.
      local steps = redis.call('HGETALL', stepsKey(base, id))
      if #steps > 0 then fields[#fields + 1] = 'sx'; fields[#fields + 1] = '1' end
      chunked('HSET', ojk, fields, 2)
      if #steps > 0 then chunked('HSET', stepsKey(obase, f[3]), steps, 2) end
      if group then
        groups().pushGrouped(obase, ojk, f[3], group, 0, false)
      else
        redis.call('RPUSH', obase .. 'wait', f[3])
      end
      signalWork(obase .. 'marker')
      redis.call('XADD', obase .. 'events', 'MAXLEN', '~', eventsCap(obase .. 'meta'), '*', 'event', 'added',
        'ids', cjson.encode({ f[3] }), 'names', cjson.encode({ f[4] }))
      if f[1] == 'waiting' then
        redis.call('LREM', k.wait, 1, id)
      else
        redis.call('ZREM', k[f[1]], id)
      end
      deleteJob(base, id)
      emit(k.events, eventsCap(k.meta), 'replayed', 'jobId', id, 'originQueue', f[2], 'originId', f[3])
    end
  end
  out[#out + 1] = code
end
return out
