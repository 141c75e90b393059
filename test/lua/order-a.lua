-- Given second: within a tick it runs after order-b and before order-c.
for i = 1, 3 do
  print("a", tick())
  wait(2)
end
