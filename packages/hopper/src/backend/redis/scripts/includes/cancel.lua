--[[ cancel: cancellation is sticky. A job cancelled while active (`cx` holds the reason, set by
  cancelJob) that leaves active without a result of its own (its lock expired and the stall
  rescue takes it, a closing worker releases it, a reconnected worker releases it as an orphan)
  ends failed as cancelled, never back in line; it runs again only when retried (retryJobs
  clears `cx`). The holder's own moves (moveToDelayed, moveToWait, moveToWaitingChildren) are
  refused with code -5 while `cx` is set. ]]
--@include base
--@include retention
--@include flow

-- Ends active job `id`, already taken out of the active set and its group released by the
-- caller, as failed with its cancel reason, kept per `keep`, never dead-lettered. `f`: its
-- fields { cx, am, pl } as read by the caller. `started`: its processor ran (the attempt counts
-- as made), false for a job whose claim reply was lost.
local function endCancelled(fin, base, eventsKey, cap, jk, id, keep, f, now, started)
  local reason, made = f[1], tonumber(f[2]) or 0
  if started then made = made + 1 end
  releaseDedup(base, jk, id, now)
  finish(fin, jk, id, keep, { 's', 'failed', 'fo', now, 'fr', reason, 'am', made })
  emit(eventsKey, cap, 'failed', 'jobId', id, 'failedReason', reason, 'prev', 'active', 'cancelled', '1', 'attemptsMade', made)
  emit(eventsKey, cap, 'cancelled', 'jobId', id, 'reason', reason)
  notifyParent(base, id, f[3], 'failed', reason, now)
end
