--[[ reserveJobIds: moves the queue's job id counter (the last automatic id given) to at least
  `atLeast`, so that no later add takes an id at or below it (`hopper migrate` keeps the ids
  Hopper gives apart from those a BullMQ queue still gives). Never moves it back.
  KEYS: id
  ARGV: atLeast
    atLeast: an integer >= 0 (0 only reads).
  Returns: the counter after the call. ]]

local current = tonumber(redis.call('GET', k.id)) or 0
local atLeast = tonumber(argv.atLeast)
if atLeast > current then
  redis.call('SET', k.id, string.format('%d', atLeast))
  return atLeast
end
return current
