# build/bench.csv -> build/bench.png: ns per round trip against the live stack
# each of 4 coroutines holds, for each backend, with its floor.
set terminal pngcairo size 900,600
set output 'build/bench.png'
set datafile separator ','
set logscale xy 2
set xlabel 'N, bytes of live stack held by each of 4 coroutines'
set ylabel 'ns per round trip (median, min-max)'
set key top left
held(b) = sprintf("< grep '^%s,stack' build/bench.csv", b)
plot held('ucontext') using 3:5:6:7 with yerrorlines title 'ucontext', \
     held('asm') using 3:5:6:7 with yerrorlines title 'asm', \
     held('ucontext') using 3:9 with lines dashtype 2 title 'floor: fcontext + two memcpy(N)'
