--[[ releaseOrphans: after a reconnect, puts back jobs held under the caller's worker id by
  attempts the worker does not know (claimed by a call whose reply was lost), without counting a
  stall or an attempt start. A cancelled orphan ends failed as cancelled (includes/cancel).
  Walks the active set with ZSCAN in bounded steps (call again with the returned cursor until it
  is '0'): jobs that stay active during the walk are each seen at least once, whatever claims,
  completions and releases happen between calls (a walk by rank would skip or repeat jobs when
  the set changes); a job seen twice is released once (its token no longer matches).
  KEYS: meta, wait, prio, prioCounter, active, failed, events, marker
  ARGV: now, base, workerId, cursor, count, failKeep, voidUpTo, ...known
    voidUpTo: '' or a claim number: the worker's wait claims numbered up to it are void from now
      on (includes/base, waitClaimVoidKey): a claim queued behind an idle wait on a connection the
      worker has left may still run when a wake-up reaches it before Redis sees the connection
      close; it then takes nothing. Sent with the walk's first step: a claim that ran before it
      left its jobs in `active`, where the walk finds them.
    known: 2 values per attempt the worker holds (running, or finished and not yet recorded):
      job id, lock token. Pairs, not tokens alone: a claim that ioredis re-sent after its reply
      was lost ran twice with the same token prefix, so two jobs carry the same token and only
      the second reply reached the worker.
    failKeep: retention spec for cancelled orphans that set no removeOnFail.
  Returns: { nextCursor ('0' when done), released count, cancelled count } ]]
--@include base
--@include cancel
--@include counters

local now = nowMs(argv.now)
local base = argv.base
local owner = argv.workerId .. ':'
local known = {}
-- Keyed by token, newline, id: a token never holds a newline, so the key is unambiguous.
for i = REST, #ARGV, 2 do known[ARGV[i + 1] .. '\n' .. ARGV[i]] = true end
local scan = redis.call('ZSCAN', k.active, argv.cursor, 'COUNT', tonumber(argv.count))
local members = scan[2]
-- Reads first: the orphans among the scanned jobs and their fields.
local orphans, fields = {}, {}
for i = 1, #members, 2 do
  local id = members[i]
  local f = redis.call('HMGET', jobKey(base, id), 'tk', 'as', 'p', 'g', 'ga', 'cx', 'am', 'pl', 'o', 'n')
  if f[1] and not known[f[1] .. '\n' .. id] and string.sub(f[1], 1, #owner) == owner then
    orphans[#orphans + 1] = id
    fields[#orphans] = f
  end
end
-- Then the writes. A worker's claim numbers only grow, and its walks never overlap: the value set
-- here is never below the one it replaces.
if argv.voidUpTo ~= '' then
  redis.call('SET', waitClaimVoidKey(base, argv.workerId), argv.voidUpTo, 'PX', WAIT_CLAIM_VOID_MS)
end
local cap = eventsCap(k.meta)
local fin = newFinisher(base, k.failed, now)
local rel = {}
local released, cancelled = 0, 0
for i = 1, #orphans do
  local id, f = orphans[i], fields[i]
  local jk = jobKey(base, id)
  redis.call('ZREM', k.active, id)
  redis.call('HDEL', jk, 'tk')
  noteRelease(rel, f[4], f[5])
  redis.call('HSET', jk, 'as', math.max((tonumber(f[2]) or 1) - 1, 0))
  if f[6] then
    endCancelled(fin, base, k.events, cap, jk, id, failKeepOf(f[9], argv.failKeep), { f[6], f[7], f[8] }, now, false)
    countOutcome('cancelled', f[10])
    cancelled = cancelled + 1
  else
    local state = pushReady(k, jk, id, tonumber(f[3]) or 0, true, f[4])
    emit(k.events, cap, 'waiting', 'jobId', id, 'prev', 'active', 'state', state)
    released = released + 1
  end
end
flushFinisher(fin)
flushReleases(base, rel)
flushCounts(base)
if released > 0 then signalWork(k.marker) end
return { scan[1], released, cancelled }
