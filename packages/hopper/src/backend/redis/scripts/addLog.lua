--[[ addLog: appends a line to a job's log, keeping at most `keep` lines (0 = all).
  KEYS: job, logs
    The job's hash and log list: they route the call to the job's Cluster slot.
  ARGV: base, id, line, token, attempt, keep, client, seq
    token/attempt: the caller's fence ('' for an unfenced call from a fetched job).
    client/seq: the calling backend's id and this call's number (increasing per client). The job
      remembers which of a client's last 31 calls it applied (`lq` = client:highest seq:bitmask of
      the 30 below it): a call ioredis re-sent after its reply was lost appends nothing again,
      whatever order the calls arrive in (an EVALSHA falling back to EVAL may overtake). A call
      more than 30 behind the highest is taken as applied; a write by another client to the
      same job's log in between makes a re-send look new.
  Returns: the number of log lines; codes -1 job missing, -2 stale token or attempt ]]
--@include base
--@include fence

local code = checkFence(k.job, argv.token, argv.attempt)
if code ~= 1 then return code end
local seq = tonumber(argv.seq)
local high, mask = seq, 0
local last = redis.call('HGET', k.job, 'lq')
if last then
  local c, h, m = string.match(last, '^(.*):(%d+):(%d+)$')
  if c == argv.client then
    h, m = tonumber(h), tonumber(m)
    local applied = false
    if seq > h then
      local shift = seq - h
      if shift <= 30 then mask = bit.band(bit.bor(bit.lshift(m, shift), bit.lshift(1, shift - 1)), 1073741823) end
    elseif seq == h or h - seq > 30 then
      applied = true
    else
      local b = bit.lshift(1, h - seq - 1)
      applied = bit.band(m, b) ~= 0
      high, mask = h, bit.bor(m, b)
    end
    -- Applied already: nothing appended again; the answer is the number of lines now.
    if applied then return redis.call('LLEN', k.logs) end
  end
end
-- `sx`: the job has a key besides its hash (includes/base removedKeys).
redis.call('HSET', k.job, 'lq', argv.client .. ':' .. high .. ':' .. mask, 'sx', '1')
local count = redis.call('RPUSH', k.logs, argv.line)
local keep = tonumber(argv.keep)
if keep > 0 and count > keep then
  redis.call('LTRIM', k.logs, -keep, -1)
  count = keep
end
return count
