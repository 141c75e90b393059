-- bench_lua's round trip: wait, again and again, at the top of the script.
local wait = wait
while true do wait() end
