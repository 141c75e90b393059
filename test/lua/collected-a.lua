-- Ends at once: its thread, which only a weak table holds, is the
-- collector's from the end of the tick.
ended = setmetatable({}, {__mode = "k"})
ended[coroutine.running()] = "a"
print("a: ends at tick", tick())
