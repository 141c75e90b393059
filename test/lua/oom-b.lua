-- Waits in its comparators while the script beside it runs out of memory.
local t = {4, 3, 2, 1}
table.sort(t, function(a, b)
  print("b: compares at tick", tick())
  wait()
  return a < b
end)
print("b: sorted", table.concat(t, " "), "at tick", tick())
print("b: library allocations refused", refused_library_allocations())
