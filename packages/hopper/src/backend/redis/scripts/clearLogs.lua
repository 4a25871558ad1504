--[[ clearLogs: deletes a job's log lines, or all but the newest `keep` of them.
  KEYS: logs
  Flags: allow-oom (it only deletes: it runs while Redis is full, as it did as an EVAL script)
  ARGV: keep
    keep: lines to keep (0 = delete all).
  Returns: the number of lines left ]]

local keep = tonumber(argv.keep)
if keep <= 0 then
  redis.call('DEL', k.logs)
  return 0
end
redis.call('LTRIM', k.logs, -keep, -1)
return redis.call('LLEN', k.logs)
