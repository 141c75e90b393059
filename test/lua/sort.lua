-- A script waits inside a table.sort comparator: the sort is C code that
-- called back into Lua, which Lua's own coroutine.yield cannot leave.
local t = {5, 3, 1, 4, 2}
local compared = 0
table.sort(t, function(a, b)
  compared = compared + 1
  wait()
  return a < b
end)
print("sorted", table.concat(t, " "), "after " .. compared .. " comparisons, at tick " .. tick())

-- Without a comparator, table.sort compares with the __lt metamethod:
-- C code reaches it, and it waits there too.
local mt = {__lt = function(a, b) wait(2) return a.n < b.n end}
local boxes = {}
for _, n in ipairs({3, 1, 2}) do boxes[#boxes + 1] = setmetatable({n = n}, mt) end
table.sort(boxes)
print("boxes", boxes[1].n, boxes[2].n, boxes[3].n, "at tick " .. tick())
