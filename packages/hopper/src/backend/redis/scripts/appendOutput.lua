--[[ appendOutput: appends chunks to a job's output stream (`job.stream.write`), fenced to the
  attempt, or marks the attempt's output ended (`job.stream.end`). Each entry carries the attempt
  number (`a`) so readers can tell a retried attempt's output from the previous one's; a chunk is
  field `s` (text) or `j` (JSON), an end entry is `e`. The stream is capped (MAXLEN ~) and deleted
  with the job (includes/base jobKeys).
  KEYS: job, out
  ARGV: token, attempt, seq, maxLen, ended, ...chunks
    token/attempt: the writer's fence ('' for an unfenced call, not used by job.stream).
    seq: the writer's call number within the attempt (1, 2, ...): a call ioredis re-sent after a
      lost reply (seq <= the last applied, `os` = attempt:seq) appends nothing again.
    ended: 1 to append the end entry after the chunks.
    chunks: kind, value pairs (kind 's' text or 'j' JSON), at most 200 pairs per call (the caller
      splits larger writes).
  Returns: 1 done; -1 job missing, -2 stale token or attempt (lock lost); -6 too many chunks ]]
--@include base
--@include fence

local count = (#ARGV - REST + 1) / 2
if count > 200 or count ~= math.floor(count) then return -6 end
local code = checkFence(k.job, argv.token, argv.attempt)
if code ~= 1 then return code end
local seq = tonumber(argv.seq)
local last = redis.call('HGET', k.job, 'os')
if last then
  local a, s = string.match(last, '^(%d+):(%d+)$')
  if a == argv.attempt and tonumber(s) >= seq then return 1 end
end
local cap = tonumber(argv.maxLen)
for i = REST, #ARGV, 2 do
  redis.call('XADD', k.out, 'MAXLEN', '~', cap, '*', 'a', argv.attempt, ARGV[i], ARGV[i + 1])
end
if argv.ended == '1' then
  redis.call('XADD', k.out, 'MAXLEN', '~', cap, '*', 'a', argv.attempt, 'e', '1')
end
-- `sx`: the job has a key besides its hash (includes/base removedKeys).
redis.call('HSET', k.job, 'os', argv.attempt .. ':' .. seq, 'sx', '1')
return 1
