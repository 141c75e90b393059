print("c: starts at tick", tick())
wait()
print("c: ends at tick", tick())
