--[[ addJobs: adds a batch of jobs atomically (one call of add or addBulk).
  KEYS: meta, id, wait, prio, prioCounter, delayed, events, marker, requests
  ARGV: now, base, seq, keep, ...jobs
    jobs: 8 values per job: name, data, opts ('' = none), customId ('' = auto), priority, delay,
      lifo (0/1), timestamp (0 = now; the creation time to record)
    seq: this producer's request number ('' = no dedupe). A re-sent call (ioredis resends a
      command whose reply was lost) finds its seq in `requests` and returns the first result,
      so it is applied once. `keep` is how many recent requests a producer remembers.
  Returns: { now, id1, dup1, id2, dup2, ... } where dup is 1 when a job with that custom id
    already existed (nothing written for it; a `duplicated` event is emitted).
  Codes: none; input is validated before the call. ]]
--@include base

local now = nowMs(argv.now)
local base = argv.base

if argv.seq ~= '' then
  local previous = redis.call('HGET', k.requests, argv.seq)
  if previous then return cjson.decode(previous) end
end

local cap = eventsCap(k.meta)
local result = { now }
for i = REST, #ARGV, 8 do
  local name, data, opts, customId = ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3]
  local priority, delay, lifo = tonumber(ARGV[i + 4]), tonumber(ARGV[i + 5]), ARGV[i + 6] == '1'
  local timestamp = tonumber(ARGV[i + 7])
  if timestamp == 0 then timestamp = now end
  local id = customId
  local duplicated = 0
  if id ~= '' and redis.call('EXISTS', jobKey(base, id)) == 1 then
    duplicated = 1
    emit(k.events, cap, 'duplicated', 'jobId', id)
  else
    if id == '' then id = tostring(redis.call('INCR', k.id)) end
    local jk = jobKey(base, id)
    -- One HSET with every field: each redis.call costs more than the fields it writes.
    local fields = { 'n', name, 't', timestamp }
    if opts ~= '' then fields[#fields + 1] = 'o'; fields[#fields + 1] = opts end
    if priority > 0 then fields[#fields + 1] = 'p'; fields[#fields + 1] = priority end
    if #data <= INLINE_DATA_MAX then
      fields[#fields + 1] = 'd'; fields[#fields + 1] = data
    else
      redis.call('SET', dataKey(base, id), data)
    end
    local state
    if delay > 0 then
      fields[#fields + 1] = 'dl'; fields[#fields + 1] = delay
      fields[#fields + 1] = 's'; fields[#fields + 1] = 'delayed'
      redis.call('HSET', jk, unpack(fields))
      redis.call('ZADD', k.delayed, now + delay, id)
      local first = redis.call('ZRANGE', k.delayed, 0, 0)
      if first[1] == id then signalWork(k.marker) end
      state = 'delayed'
      emit(k.events, cap, 'added', 'jobId', id, 'name', name, 'state', state, 'delay', now + delay)
    else
      if priority > 0 then
        state = 'prioritized'
        pushPrioritized(k, id, priority)
      else
        state = 'waiting'
        if lifo then redis.call('LPUSH', k.wait, id) else redis.call('RPUSH', k.wait, id) end
      end
      fields[#fields + 1] = 's'; fields[#fields + 1] = state
      redis.call('HSET', jk, unpack(fields))
      signalWork(k.marker)
      emit(k.events, cap, 'added', 'jobId', id, 'name', name, 'state', state)
    end
  end
  result[#result + 1] = id
  result[#result + 1] = duplicated
end

if argv.seq ~= '' then
  local seq = tonumber(argv.seq)
  redis.call('HSET', k.requests, argv.seq, cjson.encode(result))
  redis.call('HDEL', k.requests, tostring(seq - tonumber(argv.keep)))
  redis.call('PEXPIRE', k.requests, 3600000)
end
return result
