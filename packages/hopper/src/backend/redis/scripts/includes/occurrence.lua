--[[ occurrence: creates a scheduler's occurrence job from the scheduler's template. The job's id is
  sched:<schedulerId>:<instant ms>; `sk` names the scheduler and `si` holds the instant. ]]

-- Creates occurrence `id` for `instant`, delayed until `due` (or ready now when `ready`).
-- Returns the state it entered. `tpl` is the decoded template { name, data, opts, priority }.
local function createOccurrence(k, base, id, schedId, instant, due, now, tpl, ready)
  local jk = jobKey(base, id)
  local fields = { 'n', tpl.name, 't', now, 'sk', schedId, 'si', instant }
  local group = groupOfOpts(tpl.opts)
  if group then fields[#fields + 1] = 'g'; fields[#fields + 1] = group end
  if tpl.opts ~= '' then fields[#fields + 1] = 'o'; fields[#fields + 1] = tpl.opts end
  if tpl.priority > 0 then fields[#fields + 1] = 'p'; fields[#fields + 1] = tpl.priority end
  dataFields(base, id, tpl.data, fields)
  if ready then
    chunked('HSET', jk, fields, 2)
    local state = pushReady(k, jk, id, tpl.priority, false, group or false)
    signalWork(k.marker)
    return state
  end
  fields[#fields + 1] = 'dl'; fields[#fields + 1] = math.max(due - now, 0)
  fields[#fields + 1] = 's'; fields[#fields + 1] = 'delayed'
  chunked('HSET', jk, fields, 2)
  pushDelayed(k, jk, id, due)
  return 'delayed'
end

local function decodeTemplate(raw)
  local t = cjson.decode(raw)
  return { name = t.name, data = t.data, opts = t.opts or '', priority = tonumber(t.priority) or 0 }
end
