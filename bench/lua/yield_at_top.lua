-- bench_lua's Lua coroutine: the same objects, waiting where Lua's own
-- coroutine.yield can, at the top of the coroutine's function.
local t = {5, 3, 1, 4, 2}
local less = function(a, b) return a < b end
coroutine.yield()
table.sort(t, less)
