-- bench_lua's waiting script: it waits inside its table.sort comparator.
local t = {5, 3, 1, 4, 2}
table.sort(t, function(a, b) wait() return a < b end)
