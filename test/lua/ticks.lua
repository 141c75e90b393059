-- Ticks count from 0; wait() gives the others 1 tick, wait(n) n ticks, and
-- the script goes on at the tick it asked for, not one sooner or later.
print("start", tick())
wait()
print("after wait()", tick())
wait(1)
print("after wait(1)", tick())
wait(3)
print("after wait(3)", tick())
for i = 1, 3 do
  wait(i)
  print("after wait(" .. i .. ")", tick())
end
-- Ticks nobody waits for cost nothing: the host goes straight to the next.
wait(1000000)
print("after wait(1000000)", tick())
