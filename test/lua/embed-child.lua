-- Spawned by embed-spawner.lua.
print("child: starts at tick", tick())
wait()
print("child: ends at tick", tick())
