--[[ addLog: appends a line to a job's log, keeping at most `keep` lines (0 = all).
  KEYS: (none)
  ARGV: base, id, line, token, attempt, keep
    token/attempt: the caller's fence ('' for an unfenced call from a fetched job).
  Returns: the number of log lines; codes -1 job missing, -2 stale token or attempt ]]
--@include base
--@include fence

local jk = jobKey(argv.base, argv.id)
local code = checkFence(jk, argv.token, argv.attempt)
if code ~= 1 then return code end
local count = redis.call('RPUSH', logsKey(argv.base, argv.id), argv.line)
local keep = tonumber(argv.keep)
if keep > 0 and count > keep then
  redis.call('LTRIM', logsKey(argv.base, argv.id), -keep, -1)
  count = keep
end
return count
