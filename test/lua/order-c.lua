-- Given last; it waits 3 ticks, so it meets the others only now and then.
for i = 1, 2 do
  print("c", tick())
  wait(3)
end
print("c ends", tick())
