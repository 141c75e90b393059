-- Runs on to its end while the other scripts fail around it.
for i = 1, 4 do
  print("ok", tick())
  wait()
end
print("ok ends", tick())
