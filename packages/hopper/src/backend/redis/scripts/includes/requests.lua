--[[ requests: adds applied once. A producer numbers its add calls (seq); `requests` (rq:<producer>)
  remembers the last `keep` results, so a call ioredis re-sent after a lost reply returns the
  first result instead of adding again. ]]

-- The stored result of call `seq` ('' = not numbered), or nil when it is new.
local function previousResult(requestsKey, seq)
  if seq == '' then return nil end
  local previous = redis.call('HGET', requestsKey, seq)
  if previous then return cjson.decode(previous) end
  return nil
end

-- Remembers call `seq`'s result, forgetting the one `keep` calls older; expires after an hour.
local function recordResult(requestsKey, seq, keep, result)
  if seq == '' then return end
  redis.call('HSET', requestsKey, seq, cjson.encode(result))
  redis.call('HDEL', requestsKey, tostring(tonumber(seq) - tonumber(keep)))
  redis.call('PEXPIRE', requestsKey, 3600000)
end
