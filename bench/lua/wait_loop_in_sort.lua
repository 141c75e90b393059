-- bench_lua's round trip: wait, again and again, inside a sort comparator.
local wait = wait
table.sort({2, 1}, function() while true do wait() end end)
