-- Adds scripts while it runs, from a file and from a string: each starts
-- later in the same tick.
print("spawner: starts at tick", tick())
print("spawner: spawn", spawn("test/lua/embed-child.lua"))
print("spawner: spawn a missing file", spawn("test/lua/missing.lua"))
print("spawner: spawn a string", spawn_string("inline", "wait() error('inline fails at ' .. tick())"))
-- The host calls it between two frames, where no script runs.
function between_frames()
  between_frames = nil
  print("between frames:", pcall(wait))
end
wait(2)
print("spawner: ends at tick", tick())
