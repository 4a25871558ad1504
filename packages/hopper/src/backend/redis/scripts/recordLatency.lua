--[[ recordLatency: adds a worker's latency histogram counts (kept in memory, flushed every few
  seconds and when it closes) to the queue's `mh` hash, so the histograms are exact across every
  worker (docs/metrics.md). Fields: `<histogram>:<bucket>:<label>` (bucket counts, not cumulative:
  the reader accumulates) and `<histogram>:s:<label>` (sum, ms). Histograms: w wait time (job
  name), r run time (job name), l scheduler lateness (scheduler id). Labels are bounded: job names
  admitted by the counters (`mn`, includes/counters), scheduler ids by `ml` (at most 50 each); the
  others count under `other`. Entries of kind x record a scheduler's last run in `x:<scheduler>`
  ('finishedAt,durationMs,outcome': 1 completed, 2 failed, 3 retried), kept only when newer than
  the stored one (workers flush in any order).
  KEYS: histograms, names, schedulers
  Flags: allow-oom (bounded writes: at most 50 labels per histogram; a worker flushing its counts
    while Redis is full, at close, must not fail)
  ARGV: ...entries
    entries: 3 values each: histogram (w, r or l), label, counts ('sum,c1,...,cN': the sum in ms,
      then one count per bucket, N <= 32); or x, scheduler id, 'finishedAt,durationMs,outcome';
      at most 200 entries per call
  Returns: 1
  Codes: an error reply for malformed arguments, before anything is written ]]
--@include counters

local entries = {}
if (#ARGV - REST + 1) % 3 ~= 0 or (#ARGV - REST + 1) > 600 then
  return redis.error_reply('ERR recordLatency: expected at most 200 (histogram, label, counts) triples')
end
for i = REST, #ARGV, 3 do
  local h, label, csv = ARGV[i], ARGV[i + 1], ARGV[i + 2]
  if h ~= 'w' and h ~= 'r' and h ~= 'l' and h ~= 'x' then return redis.error_reply('ERR recordLatency: histogram must be w, r, l or x') end
  local values = {}
  for v in string.gmatch(csv, '[^,]+') do
    local n = tonumber(v)
    if n == nil or n < 0 then return redis.error_reply('ERR recordLatency: counts must be non-negative numbers') end
    values[#values + 1] = n
  end
  if h == 'x' and #values ~= 3 then return redis.error_reply('ERR recordLatency: a last run is finishedAt,durationMs,outcome') end
  if #values < 2 or #values > 33 then return redis.error_reply('ERR recordLatency: counts must be a sum and 1..32 bucket counts') end
  entries[#entries + 1] = { h = h, label = label, values = values, raw = csv }
end

-- Admission of labels (read before writing): a label seen before keeps its own series.
local function admitted(key, label)
  if label == COUNTER_OTHER or redis.call('HEXISTS', key, label) == 1 then return label end
  if redis.call('HLEN', key) < COUNTER_NAMES_MAX then
    redis.call('HSET', key, label, 1)
    return label
  end
  return COUNTER_OTHER
end

for _, e in ipairs(entries) do
  local label = admitted((e.h == 'l' or e.h == 'x') and k.schedulers or k.names, e.label)
  local v = e.values
  if e.h == 'x' then
    local field = 'x:' .. label
    local stored = redis.call('HGET', k.histograms, field)
    local storedAt = stored and tonumber(string.match(stored, '^([^,]+)')) or nil
    if not storedAt or storedAt <= v[1] then redis.call('HSET', k.histograms, field, e.raw) end
    v = { 0 }
  end
  if v[1] > 0 then redis.call('HINCRBY', k.histograms, e.h .. ':s:' .. label, math.floor(v[1])) end
  for b = 2, #v do
    if v[b] > 0 then redis.call('HINCRBY', k.histograms, e.h .. ':' .. (b - 1) .. ':' .. label, math.floor(v[b])) end
  end
end
return 1
