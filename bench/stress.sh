#!/bin/sh
# Builds the library and bench/stress.c with each compiler at -O0 and -O2,
# for each backend, and runs the stress check with a few seeds.
# Usage: bench/stress.sh [BACKEND...]   (default: ucontext asm)
set -eu
backends=${*:-ucontext asm}
dir=build/stress
mkdir -p $dir
for cxx in g++ clang++; do
	case $cxx in g++) cc=gcc ;; clang++) cc=clang ;; esac
	for opt in -O0 -O2; do
		for backend in $backends; do
			defs= objs=
			if [ $backend = asm ]; then
				defs=-DCOROUTINE_ASM=1
				$cc $opt -c asm_switch.S -o $dir/asm_switch.o
				objs=$dir/asm_switch.o
			fi
			$cxx $opt $defs -std=c++11 -fno-exceptions -fno-rtti -Wall -Wextra -Wpedantic -c coroutine.cpp -o $dir/coroutine.o
			$cc $opt -std=c99 -Wall -Wextra -Wpedantic -I. bench/stress.c $dir/coroutine.o $objs -o $dir/stress
			for seed in 1 2 3; do
				printf '%-8s %-4s %-9s ' $cxx $opt $backend
				$dir/stress $seed
			done
		done
	done
done
