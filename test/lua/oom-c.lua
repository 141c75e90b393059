-- Its first wait, in an __lt metamethod that table.sort reached, finds no
-- memory either; the next one, at the top, does.
local mt = {__lt = function(a, b) wait() return a.v < b.v end}
local t = {setmetatable({v = 2}, mt), setmetatable({v = 1}, mt)}
refuse_library_allocations(1)
print("c: sort by __lt", pcall(table.sort, t))
wait()
print("c: waited to tick", tick())
