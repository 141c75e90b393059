-- The host closes while this script waits: scripts_close ends it at its
-- wait, which raises an error there, so its to-be-closed variables close as
-- on any error; the host reports nothing, and the script runs no further.
local door <close> = setmetatable({}, {
  __close = function(_, err) print("closed: the door shuts, with:", err) end
})
print("closed: waits at tick", tick())
wait(100)
print("closed: runs on after the close (wrong)")
