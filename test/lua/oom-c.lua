-- Its first wait, in an __lt metamethod that table.sort reached, finds no
-- memory either; the next one, at the top, does.
local mt = {__lt = function(a, b) wait() return a.v < b.v end}
local t = {setmetatable({v = 2}, mt), setmetatable({v = 1}, mt)}
refuse_library_allocations(1)
print("c: sort by __lt", pcall(table.sort, t))
wait()
print("c: waited to tick", tick())
-- Caught where it is raised, in the comparator, the sort goes on from there.
refuse_library_allocations(1)
local failed, u = 0, {3, 1, 2}
table.sort(u, function(a, b)
  if not pcall(wait) then failed = failed + 1 end
  return a < b
end)
print("c: sorted", table.concat(u, " "), "at tick", tick(), "waits failed", failed)
