-- Fails at tick 2 with Lua's message; the others run on.
print("fail", tick())
wait(2)
local nothing
print("fail, about to fail", tick())
nothing.field = 1
print("never printed")
