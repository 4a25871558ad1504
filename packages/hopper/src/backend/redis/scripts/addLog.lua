--[[ addLog: appends a line to a job's log, keeping at most `keep` lines (0 = all).
  KEYS: job, logs
    The job's hash and log list: they route the call to the job's Cluster slot.
  ARGV: base, id, line, token, attempt, keep
    token/attempt: the caller's fence ('' for an unfenced call from a fetched job).
  Returns: the number of log lines; codes -1 job missing, -2 stale token or attempt ]]
--@include base
--@include fence

local code = checkFence(k.job, argv.token, argv.attempt)
if code ~= 1 then return code end
local count = redis.call('RPUSH', k.logs, argv.line)
local keep = tonumber(argv.keep)
if keep > 0 and count > keep then
  redis.call('LTRIM', k.logs, -keep, -1)
  count = keep
end
return count
