--[[ configureQueue: sets or removes queue-wide limits and group defaults in the queue's meta:
  gcc global concurrency, lmax/ldur rate limit (max jobs per duration ms), and the group
  defaults gcon concurrency, glm/gld rate limit, gms maxSize, gwt weight.
  KEYS: meta, marker
  ARGV: ...fields
    fields: pairs name, value; an empty value removes the setting.
  Idle workers are woken: a raised limit may let them claim now.
  Returns: 1 ]]
--@include base

local set, del = {}, {}
for i = REST, #ARGV, 2 do
  if ARGV[i + 1] == '' then
    del[#del + 1] = ARGV[i]
  else
    set[#set + 1] = ARGV[i]
    set[#set + 1] = ARGV[i + 1]
  end
end
if #set > 0 then redis.call('HSET', k.meta, unpack(set)) end
-- A default group concurrency counts the grouped jobs already running (see includes/groups).
for i = 1, #set, 2 do
  if set[i] == 'gcon' and redis.call('HEXISTS', k.meta, 'gm') == 1 then countActive(string.sub(k.meta, 1, #k.meta - 4), nil) end
end
if #del > 0 then redis.call('HDEL', k.meta, unpack(del)) end
signalWork(k.marker)
return 1
