-- Given first: within a tick it runs before the others.
for i = 1, 4 do
  print("b", tick())
  wait(1)
end
