print("b: starts at tick", tick())
wait()
print("b: ends at tick", tick())
