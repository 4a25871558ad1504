--[[ settings: the field changes the configure scripts take: pairs (name, value) from args[from]
  on, where an empty value removes the field. The script passes its ARGV (an include never reads
  KEYS or ARGV itself: in the Functions library they are each call's arguments, not globals). ]]

-- Splits the pairs into fields to set (flat name/value list) and names to remove.
local function fieldChanges(args, from)
  local set, del = {}, {}
  for i = from, #args, 2 do
    if args[i + 1] == '' then
      del[#del + 1] = args[i]
    else
      set[#set + 1] = args[i]
      set[#set + 1] = args[i + 1]
    end
  end
  return set, del
end
