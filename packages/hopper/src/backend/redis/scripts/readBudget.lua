--[[ readBudget: a tenant's use of a queue's budget: the sum of the costs charged to it in the
  last `duration` ms (includes/window). Reads only: expired entries are left for the next add to
  trim (past WINDOW_TRIM_MAX of them the use read is above the truth until they are trimmed).
  KEYS: window, sum
  ARGV: now, duration
  Returns: the use, as a string (costs may be fractional). ]]
--@include base
--@include window

local now = nowMs(argv.now)
local use = windowUse(k.window, k.sum, now, tonumber(argv.duration))
return tostring(use)
