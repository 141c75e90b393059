# Makefile for the shared-stack coroutine library.  `make help` lists the targets.
CC       ?= cc
CXX      ?= g++
AR       ?= ar
CFLAGS   ?= -O2 -g
CXXFLAGS ?= -O2 -g
LDFLAGS  ?=
PREFIX   ?= /usr/local
DESTDIR  ?=
ASM      ?= 0

# Backends: ucontext (swapcontext) and asm (asm_switch.S).  `make ASM=1`
# builds the demo and the library with the assembly switch.
BACKENDS := ucontext asm
ifeq ($(ASM),1)
BACKEND := asm
else
BACKEND := ucontext
endif

WARN    := -Wall -Wextra -Wpedantic
# The library is C with a C++ spelling: no exceptions, no RTTI, so that a C
# program links it with the C compiler driver and no C++ runtime.
LIBFLAGS := -std=c++11 -fno-exceptions -fno-rtti
DEFS_ucontext :=
DEFS_asm      := -DCOROUTINE_ASM=1
TESTS := $(basename $(notdir $(wildcard test/test_*.c)))

.PHONY: all run test install uninstall clean help
all: main libcoroutine.a

# The top-level artifacts are copies of the selected backend's; build/selected
# changes only when ASM does, so that switching backends relinks them.
$(shell mkdir -p build; echo $(BACKEND) | cmp -s - build/selected || echo $(BACKEND) > build/selected)

main: build/$(BACKEND)/main build/selected
	cp $< $@

libcoroutine.a: build/$(BACKEND)/libcoroutine.a build/selected
	cp $< $@

run: main
	./main

build/%/coroutine.o: coroutine.cpp coroutine.h
	@mkdir -p $(@D)
	$(CXX) $(CPPFLAGS) $(DEFS_$*) $(LIBFLAGS) $(WARN) $(CXXFLAGS) -c $< -o $@

build/asm/asm_switch.o: asm_switch.S
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

build/ucontext/libcoroutine.a: build/ucontext/coroutine.o
build/asm/libcoroutine.a: build/asm/coroutine.o build/asm/asm_switch.o
build/%/libcoroutine.a:
	rm -f $@
	$(AR) rcs $@ $^

build/%/main: main.cpp coroutine.h build/%/libcoroutine.a
	$(CXX) $(CPPFLAGS) $(WARN) $(CXXFLAGS) $(LDFLAGS) $< build/$*/libcoroutine.a -o $@

# Tests are C programs linked with the C driver: that they link at all
# proves that the library needs no C++ runtime.
TESTLIBS := -lcmocka -lpthread -lm

build/test/%.o: test/%.c coroutine.h $(wildcard test/*.h)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(WARN) $(CFLAGS) -I. -c $< -o $@

build/ucontext/test_%: build/test/test_%.o build/ucontext/libcoroutine.a
	$(CC) $(LDFLAGS) $^ $(TESTLIBS) -o $@

build/asm/test_%: build/test/test_%.o build/asm/libcoroutine.a
	$(CC) $(LDFLAGS) $^ $(TESTLIBS) -o $@

test: $(foreach b,$(BACKENDS),$(addprefix build/$(b)/,$(TESTS)))
	@for t in $^; do echo "== $$t"; ./$$t || exit 1; done

coroutine.pc: coroutine.pc.in
	sed 's|@PREFIX@|$(PREFIX)|' $< > $@

install: libcoroutine.a coroutine.pc
	install -d $(DESTDIR)$(PREFIX)/include $(DESTDIR)$(PREFIX)/lib/pkgconfig
	install -m 644 coroutine.h $(DESTDIR)$(PREFIX)/include/coroutine.h
	install -m 644 libcoroutine.a $(DESTDIR)$(PREFIX)/lib/libcoroutine.a
	install -m 644 coroutine.pc $(DESTDIR)$(PREFIX)/lib/pkgconfig/coroutine.pc

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/include/coroutine.h $(DESTDIR)$(PREFIX)/lib/libcoroutine.a \
	      $(DESTDIR)$(PREFIX)/lib/pkgconfig/coroutine.pc

clean:
	rm -rf build main libcoroutine.a coroutine.pc

# ---- Benchmarks: `make bench` (timings), `make bench-ir` (instruction counts)
# One bench binary per backend, built with -O2 whatever CXXFLAGS says.
# Boost.Context's fcontext is the floor of a context switch; without
# libboost-context-dev the bench builds all the same, without that floor
# (a compile-and-link test decides, evaluated only when a bench is built).
BENCH_FCONTEXT_TEST = printf '\#include <boost/context/detail/fcontext.hpp>\nint main() { return boost::context::detail::make_fcontext(0, 0, 0) != 0; }\n' \
	| $(CXX) -x c++ - -lboost_context -o /dev/null 2>/dev/null
BENCH_FCONTEXT = $(shell $(BENCH_FCONTEXT_TEST) && echo 1 || echo 0)
BENCH_BINS := $(foreach b,$(BACKENDS),build/$(b)/bench)

.PHONY: bench bench-ir bench-stress
build/%/bench: bench/bench.cpp coroutine.h build/%/libcoroutine.a
	$(CXX) $(CPPFLAGS) -I. -DBENCH_BACKEND='"$*"' -DBENCH_HAVE_FCONTEXT=$(BENCH_FCONTEXT) -std=c++11 $(WARN) \
		$(CXXFLAGS) -O2 $(LDFLAGS) $< build/$*/libcoroutine.a $(if $(filter 1,$(BENCH_FCONTEXT)),-lboost_context) -o $@

bench: $(BENCH_BINS)
	echo "backend,variant,n,unit,median,min,max,floor,floor_median,ratio" > build/bench.csv
	@for b in $^; do ./$$b build/bench.csv || exit 1; done
	@if command -v gnuplot >/dev/null; then gnuplot bench/plot.gp && echo "wrote build/bench.csv, build/bench.png"; \
	else echo "wrote build/bench.csv; no gnuplot, no build/bench.png"; fi

bench-ir: $(BENCH_BINS)
	bench/bench-ir.sh $^

# Not a benchmark: a randomised check of the library under g++ and clang++,
# -O0 and -O2, for the backends a performance change must keep correct.
bench-stress:
	bench/stress.sh $(BACKENDS)

# ---- cross-test: the demo and the suite on aarch64, under qemu-user --------
# Needs g++-aarch64-linux-gnu, qemu-user and libcmocka-dev:arm64 (multiarch).
CROSS     ?= aarch64-linux-gnu-
CROSS_CC  ?= $(CROSS)gcc
CROSS_CXX ?= $(CROSS)g++
CROSS_AR  ?= $(CROSS)ar
QEMU      ?= qemu-aarch64 -L /usr/aarch64-linux-gnu
CROSS_DIRS := $(addprefix build/aarch64-,$(BACKENDS))

.PHONY: cross-test
build/aarch64-%/coroutine.o: coroutine.cpp coroutine.h
	@mkdir -p $(@D)
	$(CROSS_CXX) $(CPPFLAGS) $(DEFS_$*) $(LIBFLAGS) $(WARN) $(CXXFLAGS) -c $< -o $@

build/aarch64-asm/asm_switch.o: asm_switch.S
	@mkdir -p $(@D)
	$(CROSS_CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

build/aarch64-ucontext/libcoroutine.a: build/aarch64-ucontext/coroutine.o
build/aarch64-asm/libcoroutine.a: build/aarch64-asm/coroutine.o build/aarch64-asm/asm_switch.o
build/aarch64-%/libcoroutine.a:
	rm -f $@
	$(CROSS_AR) rcs $@ $^

build/aarch64-%/main: main.cpp coroutine.h build/aarch64-%/libcoroutine.a
	$(CROSS_CXX) $(CPPFLAGS) $(WARN) $(CXXFLAGS) $(LDFLAGS) $< build/aarch64-$*/libcoroutine.a -o $@

build/aarch64-test/%.o: test/%.c coroutine.h $(wildcard test/*.h)
	@mkdir -p $(@D)
	$(CROSS_CC) $(CPPFLAGS) $(WARN) $(CFLAGS) -I. -c $< -o $@

build/aarch64-ucontext/test_%: build/aarch64-test/test_%.o build/aarch64-ucontext/libcoroutine.a
	$(CROSS_CC) $(LDFLAGS) $^ $(TESTLIBS) -o $@

build/aarch64-asm/test_%: build/aarch64-test/test_%.o build/aarch64-asm/libcoroutine.a
	$(CROSS_CC) $(LDFLAGS) $^ $(TESTLIBS) -o $@

# The demo's output must be byte-identical to the native ucontext demo's.
build/main.out: build/ucontext/main
	./$< > $@

cross-test: build/main.out $(foreach d,$(CROSS_DIRS),$(d)/main $(addprefix $(d)/,$(TESTS)))
	@for d in $(CROSS_DIRS); do echo "== $$d/main"; \
		$(QEMU) $$d/main | cmp - build/main.out || exit 1; done
	@for t in $(filter $(addsuffix /test_%,$(CROSS_DIRS)),$^); do echo "== $$t"; \
		$(QEMU) $$t || exit 1; done

help:
	@echo "make            build the demo (main) and libcoroutine.a; ASM=1 for the assembly switch"
	@echo "make run        build and run the demo"
	@echo "make test       build and run the CMocka suite against both backends"
	@echo "make install    install header, library and pkg-config file (PREFIX, DESTDIR)"
	@echo "make uninstall  remove what install put there"
	@echo "make bench      time both backends next to their floors: build/bench.csv, build/bench.png"
	@echo "make bench-ir   instructions per operation of both backends, counted by callgrind"
	@echo "make bench-stress  random-depth stress check, both compilers, -O0 and -O2, both backends"
	@echo "make cross-test build the demo and the suite for aarch64 (both backends), run them under qemu"
	@echo "make clean      remove everything built"
