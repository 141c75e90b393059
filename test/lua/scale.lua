-- make lua-test runs 5,000 copies of this script at once (globals are
-- shared: the counters count them).  Each waits inside its sort
-- comparator, so at every tick all 5,000 are suspended there together.
started = (started or 0) + 1
local t = {5, 3, 1, 4, 2}
table.sort(t, function(a, b) wait() return a < b end)
assert(table.concat(t, " ") == "1 2 3 4 5")
finished = (finished or 0) + 1
if finished == started then
  print(finished .. " scripts sorted, each waiting in its comparator, by tick " .. tick())
end
