# Makefile for the shared-stack coroutine library: a map of what you run.
# `make help` lists the targets you run (it prints docs/make-targets.md).
#
#   make            the demo (main) and libcoroutine.a; ASM=1 for the assembly switch,
#                   CHECKED=1 for the checked build (in build/checked)
#   make run        build and run the demo
#   make examples   the examples, in build/<backend>/examples/
#   make test       the suite against both backends
#   make install    header, libraries and coroutine.pc (PREFIX, DESTDIR)
#
# One build lives in $(O) = $(B)/$(BACKEND).  The backend is a variable, not a
# pattern: targets that need several builds (test, cross-test, sanitize,
# valgrind, matrix) call make again with another BACKEND, B, compiler or RUN.
# The rest lives in mk/, a file per concern: the suite's programs (test.mk),
# README's checks (docs.mk), consumers and installs (consumers.mk), other
# Linux targets (cross.mk), Windows (windows.mk), WebAssembly (wasm.mk),
# sanitizers, valgrind, fuzzing and the build matrix (tools.mk), benchmarks
# (bench.mk), the Lua host (lua.mk), the debugger's commands (debug.mk),
# backtraces and profiles that run from a coroutine into main (profile.mk).
CC       ?= cc
CXX      ?= g++
AR       ?= ar
NM       ?= nm
OBJCOPY  ?= objcopy
CPPFLAGS ?=
CFLAGS   ?= -O2 -g
CXXFLAGS ?= -O2 -g
LDFLAGS  ?=
PREFIX   ?= /usr/local
DESTDIR  ?=
ASM      ?= 0
# CHECKED=1: the checked build (-DCOROUTINE_CHECKED=1), in its own build dir.
CHECKED  ?= 0
ifeq ($(CHECKED),1)
B        ?= build/checked
DEFS_CHECKED := -DCOROUTINE_CHECKED=1
endif
B        ?= build
RUN      ?=
EMULATOR ?=
# The file name suffix of programs: .exe when building for Windows.
EXE      ?=
# Set when the programs write text with CRLF line ends (Windows): their
# outputs are compared with the expected files as LF.
TEXT_CRLF ?=

# ucontext: swapcontext(3).  asm: asm_switch.S (`make ASM=1`).
BACKENDS := ucontext asm
ifeq ($(ASM),1)
BACKEND ?= asm
else
BACKEND ?= ucontext
endif
O := $(B)/$(BACKEND)
# The version, read from coroutine.h: the one place it is written.
version_part = $(shell sed -n 's/^.define COROUTINE_VERSION_$(1) \([0-9]*\)$$/\1/p' coroutine.h)
VERSION_MAJOR := $(call version_part,MAJOR)
VERSION := $(VERSION_MAJOR).$(call version_part,MINOR).$(call version_part,PATCH)
ifeq ($(VERSION_MAJOR),)
$(error cannot read COROUTINE_VERSION_MAJOR from coroutine.h)
endif
# The shared library, and the names a program finds it by: the soname at
# run time, libcoroutine.so when it is linked with -lcoroutine.
SHLIB  := libcoroutine.so.$(VERSION)
SONAME := libcoroutine.so.$(VERSION_MAJOR)
LIBOBJS_ucontext := $(O)/coroutine.o
LIBOBJS_asm      := $(O)/coroutine.o $(O)/asm_switch.o
PICOBJS_ucontext := $(O)/pic/coroutine.o
PICOBJS_asm      := $(O)/pic/coroutine.o $(O)/pic/asm_switch.o
DEFS_asm         := -DCOROUTINE_ASM=1
# fiber: Emscripten's fibers, chosen by coroutine.cpp itself under Emscripten.
LIBOBJS_fiber    := $(O)/coroutine.o

WARN := -Wall -Wextra -Wpedantic
# The library is C with a C++ spelling: no exceptions, no RTTI, so that a C
# program links it with the C compiler driver and no C++ runtime.  Unwind
# tables, so that coroutine_delete can unwind a coroutine through its yield
# (gcc's default on x86 and aarch64, not on armv7 and riscv64).
LIBFLAGS := -std=c++11 -fno-exceptions -fno-rtti -funwind-tables
# The tests are C programs linked with the C driver, which proves that claim
# (sanitize links them with the C++ driver: see mk/tools.mk).
CLINK ?= $(CC)
EXAMPLES_C   := game generator queens rollback hunt
EXAMPLES_CXX := script despawn
EXAMPLES      = $(EXAMPLES_C) $(EXAMPLES_CXX)

.PHONY: all run examples shared test check install uninstall clean help
.SECONDARY:
all: main libcoroutine.a

# ---- The library, the demo, the examples ------------------------------------

# main and libcoroutine.a are copies of the selected backend's; build/selected
# changes only when the backend does, so that switching relinks them.
$(shell mkdir -p build; echo $(BACKEND)$(DEFS_CHECKED) | cmp -s - build/selected || echo $(BACKEND)$(DEFS_CHECKED) > build/selected)

main: $(O)/main build/selected
	cp $< $@

libcoroutine.a: $(O)/libcoroutine.a build/selected
	cp $< $@

run: main
	./main

# The objects of the shared library, in $(O)/pic, are position-independent
# and hide every symbol that coroutine.h does not mark COROUTINE_API.  gcc
# on x86_64 finds their thread-locals through TLS descriptors, a few
# instructions where the default is a call (docs/windows-abi.md: "Modules reloaded").
TLS_DIALECT = $(if $(filter x86_64-%,$(shell $(CXX) -dumpmachine 2>/dev/null)),$(shell \
	echo 'int x;' | $(CXX) -x c++ -fPIC -mtls-dialect=gnu2 -c - -o /dev/null 2>/dev/null && echo -mtls-dialect=gnu2))
$(O)/pic/%.o: PIC = -fPIC -fvisibility=hidden $(TLS_DIALECT)

$(O)/coroutine.o $(O)/pic/coroutine.o: coroutine.cpp coroutine.h coroutine_checked.h
	@mkdir -p $(@D)
	$(CXX) $(CPPFLAGS) $(DEFS_$(BACKEND)) $(DEFS_CHECKED) $(LIBFLAGS) $(PIC) $(WARN) $(CXXFLAGS) -c $< -o $@

# The switch: asm_switch.S, or its twin for Microsoft's assembler,
# asm_switch.asm (SWITCH=asm_switch.asm: windows-msvc-test), assembled by
# llvm's ml64 (Debian 12's llvm names it llvm-ml-14 only).
SWITCH ?= asm_switch.S
ML     ?= llvm-ml-14
ASSEMBLE.S   = $(CC) $(CPPFLAGS) $(PIC) $(CFLAGS) -c $< -o $@
ASSEMBLE.asm = $(ML) -m64 /c /Fo $@ $<

$(O)/asm_switch.o $(O)/pic/asm_switch.o: $(SWITCH)
	@mkdir -p $(@D)
	$(ASSEMBLE$(suffix $(SWITCH)))

$(O)/libcoroutine.a: $(LIBOBJS_$(BACKEND))
	rm -f $@
	$(AR) rcs $@ $^

# Linked with the C driver, like a C program: no libstdc++.
$(O)/$(SHLIB): $(PICOBJS_$(BACKEND))
	$(CC) -shared -Wl,-soname,$(SONAME) $(LDFLAGS) $^ -o $@

$(O)/$(SONAME) $(O)/libcoroutine.so: $(O)/$(SHLIB)
	ln -sf $(SHLIB) $@

shared: $(O)/$(SHLIB) $(O)/$(SONAME) $(O)/libcoroutine.so

# The demo and its --trace (trace.cpp), whose frames trace_frames.cpp names
# with GCC's libbacktrace on Linux with glibc (on Windows and with musl the
# trace has no frames, and needs no libbacktrace), and whose --trace=html
# page is trace_page.html, built in as a string: one raw string literal per
# line (no escaping, no literal too long for any compiler), written by awk
# here, by cmake/embed-page.cmake and meson/embed_page.py in the others.
# Over the checked library (CHECKED=1), which keeps main off the run stack,
# where the frames are read, the trace has no frames either.
TRACELIBS ?= $(if $(EXE)$(findstring musl,$(CXX)),,-lbacktrace)
TRACE_SOURCES := main.cpp trace.cpp trace_frames.cpp
TRACE_HEADERS := trace.h trace_frames.h coroutine.h
$(O)/main$(EXE): $(TRACE_SOURCES) $(TRACE_HEADERS) $(O)/trace_page_html.h $(O)/libcoroutine.a
	$(CXX) $(CPPFLAGS) $(if $(DEFS_CHECKED),-DTRACE_NO_FRAMES) -I$(O) $(WARN) $(CXXFLAGS) $(LDFLAGS) $(TRACE_SOURCES) \
		$(O)/libcoroutine.a $(if $(DEFS_CHECKED),,$(TRACELIBS)) -o $@

%/trace_page_html.h: trace_page.html
	@mkdir -p $(@D)
	{ echo '/* Made from trace_page.html by the build: do not edit. */'; \
	  echo 'static const char trace_page_html[] ='; \
	  awk '{ print "R\"trace_page(" $$0; print ")trace_page\"" }' $<; echo ';'; } > $@

examples: $(addprefix $(O)/examples/,$(addsuffix $(EXE),$(EXAMPLES)))

$(O)/examples/%.o: examples/%.c coroutine.h
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -I. $(WARN) $(CFLAGS) -c $< -o $@

$(O)/examples/%.o: examples/%.cpp coroutine.h
	@mkdir -p $(@D)
	$(CXX) $(CPPFLAGS) -I. $(WARN) $(CXXFLAGS) -c $< -o $@

# C examples are linked with the C driver, the C++ one with the C++ driver.
$(O)/examples/%$(EXE): $(O)/examples/%.o $(O)/libcoroutine.a
	$(if $(filter $(EXAMPLES_CXX),$*),$(CXX),$(CLINK)) $(LDFLAGS) $^ -o $@

# ---- The suite ------------------------------------------------------------------
# The specification is test/spec/ (CMocka, a behaviour per test); how its
# programs are built, and the checks without CMocka, are in mk/test.mk.

# The programs of the suite: the CMocka suites, and driver and driver_cxx,
# the core checks and the C++ exception tests without CMocka, run here too.
TESTS ?= $(basename $(notdir $(wildcard test/spec/test_*.c test/spec/test_*.cpp))) driver driver_cxx

# The suite against one build: $(RUN) runs each program (valgrind, qemu).
# test/support/run.sh prints a line per program and the whole log of a
# failing one, and counts the tests (V=1: every log).
check: $(addprefix $(O)/,$(addsuffix $(EXE),$(TESTS)))
	@RUN='$(RUN)' EMULATOR='$(EMULATOR)' V='$(V)' test/support/run.sh $^

# Both backends, then README's checks, the benches' and gdb's and perf's view
# of the link to the resumer (natively), then test_misuse and
# test_alloc against an NDEBUG build (the checks must not be asserts), then
# test_api against the largest run stack the library accepts (see test.mk).
# BACKENDS_ONLY=1: the two backends' suites alone.
# Quiet (V=1 shows every command and log), and it goes on after a failure,
# so that its last line counts every test of every build it ran.
QUIET = $(if $(V),,-s) --no-print-directory
test:
	@export TEST_TALLY=$(abspath $(B))/tests.tally; mkdir -p $(B); : > $$TEST_TALLY; ok=1; \
	for b in $(BACKENDS); do $(MAKE) $(QUIET) BACKEND=$$b check-no-cxx-runtime check || ok=; done; \
	if [ -z "$(EMULATOR)$(EXE)$(NO_README_CHECK)$(BACKENDS_ONLY)" ]; then $(MAKE) $(QUIET) readme-check || ok=; \
		$(MAKE) $(QUIET) bench-check || ok=; $(MAKE) $(QUIET) frames-test || ok=; fi; \
	[ -n "$(BACKENDS_ONLY)" ] || $(MAKE) $(QUIET) BACKEND=ucontext B=$(B)/ndebug CPPFLAGS="$(CPPFLAGS) -DNDEBUG" \
		TESTS="$(NDEBUG_TESTS)" check || ok=; \
	if [ "$(LP64)" = 1 ] && [ -z "$(EMULATOR)$(BACKENDS_ONLY)" ]; then $(MAKE) $(QUIET) BACKEND=ucontext B=$(B)/maxstack \
		CPPFLAGS="$(CPPFLAGS) -DCOROUTINE_STACK_SIZE=$(MAX_STACK_SIZE)" TESTS="$(MAX_STACK_TESTS)" check || ok=; fi; \
	[ -n "$$ok" ] || echo "make test: FAILED (see above)"; \
	test/support/run.sh total && [ -n "$$ok" ]

# ---- Install -----------------------------------------------------------------

# Where install puts the libraries.
DESTLIB = $(DESTDIR)$(PREFIX)/lib
# The debugger commands (debug/coroutine-gdb.py, and its lldb twin): to
# source, and where gdb
# auto-loads them for the shared library (its auto-load directory, then the
# library's path: gdb reads it there when the prefix is its own, /usr).
DESTSHARE    = $(DESTDIR)$(PREFIX)/share/coroutine
DESTAUTOLOAD = $(DESTDIR)$(PREFIX)/share/gdb/auto-load$(PREFIX)/lib

install: libcoroutine.a $(O)/$(SHLIB)
	install -d $(DESTDIR)$(PREFIX)/include $(DESTLIB)/pkgconfig
	install -m 644 coroutine.h $(DESTDIR)$(PREFIX)/include/coroutine.h
	install -m 644 libcoroutine.a $(DESTLIB)/libcoroutine.a
	install -m 755 $(O)/$(SHLIB) $(DESTLIB)/$(SHLIB)
	ln -sf $(SHLIB) $(DESTLIB)/$(SONAME)
	ln -sf $(SHLIB) $(DESTLIB)/libcoroutine.so
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@INCLUDEDIR@|$${prefix}/include|' \
	    -e 's|@LIBDIR@|$${prefix}/lib|' -e 's|@VERSION@|$(VERSION)|' \
	    coroutine.pc.in > $(DESTLIB)/pkgconfig/coroutine.pc
	install -d $(DESTSHARE) $(DESTAUTOLOAD)
	install -m 644 debug/coroutine-gdb.py debug/coroutine_lldb.py $(DESTSHARE)/
	install -m 644 debug/coroutine-gdb.py $(DESTAUTOLOAD)/$(SHLIB)-gdb.py

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/include/coroutine.h $(DESTLIB)/libcoroutine.a \
	      $(DESTLIB)/$(SHLIB) $(DESTLIB)/$(SONAME) $(DESTLIB)/libcoroutine.so \
	      $(DESTLIB)/pkgconfig/coroutine.pc $(DESTSHARE)/coroutine-gdb.py $(DESTSHARE)/coroutine_lldb.py \
	      $(DESTAUTOLOAD)/$(SHLIB)-gdb.py

clean:
	rm -rf build main libcoroutine.a

# docs/make-targets.md is the one list: help prints it, the everyday
# targets first, then the rest by group (see mk/docs.mk for the check that
# it names every target and only targets).
help:
	@awk -f mk/help.awk docs/make-targets.md

include mk/test.mk mk/docs.mk mk/consumers.mk mk/cross.mk mk/windows.mk mk/wasm.mk mk/tools.mk mk/bench.mk \
	mk/lua.mk mk/debug.mk mk/profile.mk
