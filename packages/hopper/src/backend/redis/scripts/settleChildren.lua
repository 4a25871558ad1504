--[[ settleChildren: records what became of a parent's children that were still in another queue
  system when the parent was moved here (`hopper migrate`): a child that completed there, failed
  there with a failure policy, or was removed there. Each entry is applied as if the child were a
  job here (includes/flow): its key leaves the parent's pending set, its outcome is recorded, and
  the parent moves on when nothing is pending any more. An entry whose child is no longer pending
  for the parent changes nothing, so a re-sent or repeated call is harmless.
  KEYS: meta
    (the parent's queue: its other keys derive from base, as in includes/flow)
  ARGV: now, base, id, ...entries
    entries: 5 values each: child base, child id, outcome ('c' completed, 'f' failed, 'r'
      removed), failure policy letter ('f', 'c', 'i', 'r'; '' for none), value (return value
      JSON, or failed reason).
  Returns: { now, settled } settled: how many entries changed the parent. ]]
--@include base
--@include flow

local now = nowMs(argv.now)
local pb, pid = argv.base, argv.id
local dk = depsKey(pb, pid)
local settled = 0
for i = REST, #ARGV, 5 do
  local cb, cid, outcome, policy, value = ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3], ARGV[i + 4]
  if redis.call('SISMEMBER', dk, publicKey(cb, cid)) == 1 then
    settled = settled + 1
    if outcome == 'c' then
      childCompleted(cb, cid, pb, pid, value, now)
    elseif outcome == 'f' then
      childFailed(cb, cid, pb, pid, policy, value, now, 0, true)
    else
      childRemoved(cb, cid, pb, pid, now)
    end
  end
end
return { now, settled }
