-- Waits a tick, collects, and counts the ended scripts' threads left.
wait()
collectgarbage()
local left = 0
for _ in pairs(ended) do left = left + 1 end
print("b: threads of ended scripts left after a collection", left)
