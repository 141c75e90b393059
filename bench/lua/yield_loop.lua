-- bench_lua's round trip: Lua's own coroutine.yield, at the top of a coroutine.
local yield = coroutine.yield
while true do yield() end
