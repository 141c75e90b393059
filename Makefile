# Makefile for the shared-stack coroutine library.  `make help` lists the targets.
#
# One build lives in $(O) = $(B)/$(BACKEND).  The backend is a variable, not a
# pattern: targets that need several builds (test, cross-test, sanitize,
# valgrind, matrix) call make again with another BACKEND, B, compiler or RUN.
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
# program links it with the C compiler driver and no C++ runtime.
LIBFLAGS := -std=c++11 -fno-exceptions -fno-rtti
# The tests are C programs linked with the C driver, which proves that claim
# (sanitize links them with the C++ driver, see there).
CLINK ?= $(CC)
TESTLIBS := -lcmocka -lpthread -lm
# driver, driver_cxx: the core checks and the C++ exception tests without
# CMocka (test/driver.c; test/test_exceptions.cpp with -DTEST_PLAIN), run
# here too.
TESTS    ?= $(basename $(notdir $(wildcard test/test_*.c test/test_*.cpp))) driver driver_cxx
EXAMPLES_C   := game generator
EXAMPLES_CXX := script
EXAMPLES     := $(EXAMPLES_C) $(EXAMPLES_CXX)

.PHONY: all run examples shared check check-shared test install uninstall install-check \
	consumer-test clean help
.SECONDARY:
all: main libcoroutine.a

# ---- The library, the demo, the examples ------------------------------------

# main and libcoroutine.a are copies of the selected backend's; build/selected
# changes only when the backend does, so that switching relinks them.
$(shell mkdir -p build; echo $(BACKEND) | cmp -s - build/selected || echo $(BACKEND) > build/selected)

main: $(O)/main build/selected
	cp $< $@

libcoroutine.a: $(O)/libcoroutine.a build/selected
	cp $< $@

run: main
	./main

# The objects of the shared library, in $(O)/pic, are position-independent
# and hide every symbol that coroutine.h does not mark COROUTINE_API.
$(O)/pic/%.o: PIC := -fPIC -fvisibility=hidden

$(O)/coroutine.o $(O)/pic/coroutine.o: coroutine.cpp coroutine.h
	@mkdir -p $(@D)
	$(CXX) $(CPPFLAGS) $(DEFS_$(BACKEND)) $(LIBFLAGS) $(PIC) $(WARN) $(CXXFLAGS) -c $< -o $@

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
TRACELIBS ?= $(if $(EXE)$(findstring musl,$(CXX)),,-lbacktrace)
TRACE_SOURCES := main.cpp trace.cpp trace_frames.cpp
TRACE_HEADERS := trace.h trace_frames.h coroutine.h
$(O)/main$(EXE): $(TRACE_SOURCES) $(TRACE_HEADERS) $(O)/trace_page_html.h $(O)/libcoroutine.a
	$(CXX) $(CPPFLAGS) -I$(O) $(WARN) $(CXXFLAGS) $(LDFLAGS) $(TRACE_SOURCES) $(O)/libcoroutine.a $(TRACELIBS) -o $@

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

# ---- The test suite -----------------------------------------------------------

# The tests see the backend's macro: where the backends differ by design
# (test_fpu), a test checks each one's promise.
$(O)/%.o: test/%.c coroutine.h $(wildcard test/*.h)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(DEFS_$(BACKEND)) $(WARN) $(CFLAGS) -I. -c $< -o $@

# C++ tests (exceptions) are C++17 programs (std::uncaught_exceptions), built
# and linked with the C++ driver.
$(O)/%.o: test/%.cpp coroutine.h $(wildcard test/*.h)
	@mkdir -p $(@D)
	$(CXX) -std=c++17 $(CPPFLAGS) $(DEFS_$(BACKEND)) $(WARN) $(CXXFLAGS) -I. -c $< -o $@

$(O)/test_exceptions: $(O)/test_exceptions.o $(O)/libcoroutine.a
	$(CXX) $(LDFLAGS) $^ $(TESTLIBS) -o $@

# driver_cxx: the same C++ tests without CMocka (test/plain_suite.h), for
# targets that have none; one source, so that the two cannot drift apart.
$(O)/driver_cxx.o: test/test_exceptions.cpp coroutine.h $(wildcard test/*.h)
	@mkdir -p $(@D)
	$(CXX) -std=c++17 -DTEST_PLAIN $(CPPFLAGS) $(DEFS_$(BACKEND)) $(WARN) $(CXXFLAGS) -I. -c $< -o $@

$(O)/driver_cxx$(EXE): $(O)/driver_cxx.o $(O)/libcoroutine.a
	$(CXX) $(LDFLAGS) $^ -o $@

# test_late_runtime is a C program that loads a C++ library, and with it the
# C++ runtime, once it runs: the library calls the program's coroutine_*
# functions, which the program exports (-rdynamic).
$(O)/late_runtime_plugin.so: test/late_runtime_plugin.cpp test/late_runtime.h coroutine.h
	$(CXX) $(CPPFLAGS) $(WARN) $(CXXFLAGS) -I. -fPIC -shared $(LDFLAGS) $< -o $@

$(O)/test_late_runtime: TESTLIBS += -rdynamic
$(O)/test_late_runtime: | $(O)/late_runtime_plugin.so

# test_guard's largest frames come from code built with -fstack-clash-protection.
$(O)/clash_frames.o: test/clash_frames.c test/clash_frames.h
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(WARN) $(CFLAGS) -fstack-clash-protection -c $< -o $@

$(O)/test_guard: $(O)/clash_frames.o

$(O)/test_model.o: test/model.c

$(O)/test_%: $(O)/test_%.o $(O)/libcoroutine.a
	$(CLINK) $(LDFLAGS) $^ $(TESTLIBS) -o $@

# The core checks without CMocka, for targets that have none (see test/driver.c).
$(O)/driver$(EXE): $(O)/driver.o $(O)/model.o $(O)/libcoroutine.a
	$(CLINK) $(LDFLAGS) $^ -lm $(if $(EXE),,-lpthread) -o $@

# What the Windows switch owes Windows: the TIB's stack fields, the end of
# unwinding, home space, xmm6-xmm15, FP control, __chkstk (test/win_stack.c;
# Windows only).
$(O)/win_stack$(EXE): $(O)/win_stack.o $(O)/libcoroutine.a
	$(CLINK) $(LDFLAGS) $^ -o $@

# C++ exceptions inside coroutines on Microsoft's ABI (windows-msvc-test).
$(O)/msvc_exceptions$(EXE): $(O)/msvc_exceptions.o $(O)/libcoroutine.a
	$(CXX) $(LDFLAGS) $^ -o $@

# test_alloc makes the library's allocations fail on demand.
$(O)/test_alloc: TESTLIBS += -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=free,--wrap=malloc_usable_size,--wrap=mmap,--wrap=munmap

# test_examples runs the examples and the demo found beside it (under
# $EMULATOR when set), checking their output against examples/*.expected.
$(O)/test_examples: | $(addprefix $(O)/examples/,$(EXAMPLES)) $(O)/main

# The suite against one build: $(RUN) runs each program (valgrind, qemu).
check: $(addprefix $(O)/,$(addsuffix $(EXE),$(TESTS)))
	@for t in $^; do echo "==" $(RUN) $$t; EMULATOR='$(EMULATOR)' $(RUN) $$t || exit 1; done

# A library that needs the C++ runtime (mangled names, exceptions,
# unwinding) would not link into a C program with the C driver, nor one
# that needs libatomic (which the C driver does not link).  The one
# exception is the weak reference to __cxa_get_globals (w: NULL when no
# runtime is linked in), with which coroutine.cpp swaps exception state; a
# runtime loaded later it finds through the C library (dlsym, dlopen,
# dl_iterate_phdr: no C++ symbols).
check-no-cxx-runtime: $(O)/libcoroutine.a
	@if nm -u $< | grep -v '^ *w __cxa_get_globals$$' | awk '{ print $$NF }' \
		| grep -E '^(_Z|__cxa_|__gxx_personality|_Unwind_|__atomic_|__sync_)'; then \
		echo "$< needs the C++ runtime or libatomic for the symbols above"; exit 1; fi

# The shared library exports the functions of coroutine.h, nothing else,
# and needs no C++ runtime.
CHECK_SHARED := test/consumers/check-shared.sh

check-shared: $(O)/$(SHLIB)
	$(CHECK_SHARED) $<

# The misuse and out-of-memory tests also run against an NDEBUG build: the
# checks must not be asserts.
NDEBUG_TESTS := test_misuse test_alloc

# The API tests also run against the largest run stack the library accepts,
# INT_MAX rounded down to 16: its sizes must not overflow on the way to
# mmap.  On 64-bit targets only (the run stack takes 2 GiB of address
# space), and not under an emulator: qemu-user keeps 12 MiB of its own
# bookkeeping per 2 GiB mapping it has unmapped, which the test that close
# gives back the address space would take for a leak.
MAX_STACK_SIZE := 2147483632
MAX_STACK_TESTS := test_api
LP64 = $(shell $(CC) -dM -E -x c /dev/null | grep -c __LP64__)

test:
	@for b in $(BACKENDS); do $(MAKE) --no-print-directory BACKEND=$$b check-no-cxx-runtime check || exit 1; done
	@if [ -z "$(EMULATOR)$(EXE)" ]; then $(MAKE) --no-print-directory readme-check; fi
	@$(MAKE) --no-print-directory BACKEND=ucontext B=$(B)/ndebug CPPFLAGS="$(CPPFLAGS) -DNDEBUG" \
		TESTS="$(NDEBUG_TESTS)" check
	@if [ "$(LP64)" = 1 ] && [ -z "$(EMULATOR)" ]; then $(MAKE) --no-print-directory BACKEND=ucontext B=$(B)/maxstack \
		CPPFLAGS="$(CPPFLAGS) -DCOROUTINE_STACK_SIZE=$(MAX_STACK_SIZE)" TESTS="$(MAX_STACK_TESTS)" check; fi

# ---- Install -----------------------------------------------------------------

# Where install puts the libraries.
DESTLIB = $(DESTDIR)$(PREFIX)/lib

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

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/include/coroutine.h $(DESTLIB)/libcoroutine.a \
	      $(DESTLIB)/$(SHLIB) $(DESTLIB)/$(SONAME) $(DESTLIB)/libcoroutine.so \
	      $(DESTLIB)/pkgconfig/coroutine.pc

# Installs into a scratch DESTDIR, builds the generator example against the
# installed copy through pkg-config (which reads only that coroutine.pc and
# prefixes its paths with the DESTDIR), once linked with the shared library,
# which -lcoroutine prefers, and once with the static one; checks their
# output and that coroutine.pc's version is coroutine.h's, then uninstalls
# and checks that nothing is left behind.
INSTALL_CHECK := $(CURDIR)/build/install-check
INSTALLED_PKG_CONFIG := PKG_CONFIG_LIBDIR=$(INSTALL_CHECK)$(PREFIX)/lib/pkgconfig \
	PKG_CONFIG_SYSROOT_DIR=$(INSTALL_CHECK) pkg-config

install-check:
	rm -rf $(INSTALL_CHECK)
	$(MAKE) install DESTDIR=$(INSTALL_CHECK)
	$(CHECK_SHARED) $(INSTALL_CHECK)$(PREFIX)/lib/libcoroutine.so
	$(CC) $(CFLAGS) $(LDFLAGS) examples/generator.c \
		$$($(INSTALLED_PKG_CONFIG) --cflags --libs coroutine) -o build/installed-generator
	readelf -d build/installed-generator | grep -q 'NEEDED.*\[$(SONAME)\]'
	LD_LIBRARY_PATH=$(INSTALL_CHECK)$(PREFIX)/lib ./build/installed-generator | diff -u examples/generator.expected -
	$(CC) $(CFLAGS) $(LDFLAGS) examples/generator.c $$($(INSTALLED_PKG_CONFIG) --cflags coroutine) \
		$(INSTALL_CHECK)$(PREFIX)/lib/libcoroutine.a -o build/installed-generator-static
	./build/installed-generator-static | diff -u examples/generator.expected -
	$(CC) $(CFLAGS) test/consumers/version.c $$($(INSTALLED_PKG_CONFIG) --cflags coroutine) \
		-DEXPECTED_VERSION='"'"$$($(INSTALLED_PKG_CONFIG) --modversion coroutine)"'"' -o build/installed-version
	./build/installed-version
	$(MAKE) uninstall DESTDIR=$(INSTALL_CHECK)
	test -z "$$(find $(INSTALL_CHECK) ! -type d)"
	rm -rf $(INSTALL_CHECK)
	@echo "install-check: OK"

# ---- The outputs, without CMocka -------------------------------------------------
# The demo and each example print exactly examples/<name>.expected on stdout
# (and <name>.stderr, or nothing, on stderr) and end with their status, run
# under $(RUN): test_examples checks the same with CMocka, this is for
# targets that have none.
OUTPUT_ARGS_script   := $(sort $(wildcard examples/scripts/*.txt))
OUTPUT_STATUS_script := 1

# $(call program-name,PATH): the name of a program without directory and EXE.
program-name = $(basename $(notdir $(1)))

define check-output
	@echo "==" $(RUN) $(1) $(OUTPUT_ARGS_$(call program-name,$(1)))
	@$(RUN) $(1) $(OUTPUT_ARGS_$(call program-name,$(1))) > $(1).out 2> $(1).err; \
		test $$? = $(or $(OUTPUT_STATUS_$(call program-name,$(1))),0) || { echo "$(1): wrong exit status"; exit 1; }
	$(if $(TEXT_CRLF),@sed -i 's/\r$$//' $(1).out $(1).err)
	@cmp examples/$(call program-name,$(1)).expected $(1).out
	@cmp $(or $(wildcard examples/$(call program-name,$(1)).stderr),/dev/null) $(1).err

endef

.PHONY: check-outputs test-without-cmocka
check-outputs: $(addsuffix $(EXE),$(O)/main $(addprefix $(O)/examples/,$(EXAMPLES)))
	$(foreach p,$^,$(call check-output,$(p)))

# What `test` checks, for a target without CMocka: test/driver.c, the C++
# exception tests built without CMocka (driver_cxx), and the outputs.
test-without-cmocka:
	@for b in $(BACKENDS); do $(MAKE) --no-print-directory BACKEND=$$b TESTS="driver driver_cxx" \
		check-no-cxx-runtime check check-outputs || exit 1; done

# ---- README's walkthrough, made by the program --------------------------------------
# README's trace excerpt and frame table ("How stack copying works") are what
# main --trace prints when built as `make` builds it by default, with g++ on
# x86_64: this build, whatever CXX, CXXFLAGS or CPPFLAGS say.  readme-trace
# rewrites them; readme-check (run by `make test`) fails when they are stale.
# Elsewhere the sizes differ: the check says so and passes.
README_BUILD := $(B)/readme
README_CXX   := g++ -O2 -g
$(README_BUILD)/main: $(TRACE_SOURCES) $(TRACE_HEADERS) $(README_BUILD)/trace_page_html.h coroutine.cpp
	@mkdir -p $(@D)
	$(README_CXX) $(LIBFLAGS) -c coroutine.cpp -o $(@D)/coroutine.o
	$(README_CXX) -I$(@D) $(TRACE_SOURCES) $(@D)/coroutine.o -lbacktrace -o $@

.PHONY: readme-trace readme-check
readme-trace: $(README_BUILD)/main
	test/readme_trace.sh write $<

readme-check:
	@if [ "$$(uname -m)" != x86_64 ]; then \
		echo "readme-check: README's walkthrough comes from x86_64, not checked on $$(uname -m)"; \
	elif ! grep -q "from g++ $$(g++ -dumpversion | cut -d. -f1) -O2" README.md; then \
		echo "readme-check: README's walkthrough comes from another g++ than $$(g++ -dumpversion), not checked"; \
	else $(MAKE) --no-print-directory -s $(README_BUILD)/main && test/readme_trace.sh check $(README_BUILD)/main; fi

# The page of main --trace=html in headless Chromium (Debian's chromium):
# the DOM its script drew at several steps of both walkthroughs must say
# what main --trace and main --trace=trees say; screenshots of four steps
# of each are left in $(B)/trace-page/.
.PHONY: trace-page-test
trace-page-test: $(O)/main$(EXE)
	test/trace_page.sh $(O)/main$(EXE) $(B)/trace-page

# ---- Other Linux targets under qemu-user -------------------------------------------
# For each target: its cross compilers' prefix and its emulator.  aarch64,
# armv7 and i686 run the whole suite (`make test`) against the multiarch
# CMocka (libcmocka-dev:arm64, :armhf, :i386); riscv64, which Debian 12 has
# no multiarch libraries for, runs test-without-cmocka, linked statically so
# that qemu needs no -L.  qemu is never given -L: with it, forked children
# hang under qemu 7.2; without it the dynamic loader and the libraries come
# from the multiarch libc6.
CROSS_SUITE_TARGETS := aarch64 armv7 i686
CROSS_DRIVER_TARGETS := riscv64
CROSS_aarch64 ?= aarch64-linux-gnu-
CROSS_armv7   ?= arm-linux-gnueabihf-
CROSS_i686    ?= i686-linux-gnu-
CROSS_riscv64 ?= riscv64-linux-gnu-
QEMU_aarch64  ?= qemu-aarch64
QEMU_armv7    ?= qemu-arm
QEMU_i686     ?= qemu-i386
QEMU_riscv64  ?= qemu-riscv64
LDFLAGS_riscv64 := -static
# $(call cross-vars,TARGET,BUILD-DIR): the variables of a build for TARGET.
cross-vars = B=$(2) CC=$(CROSS_$(1))gcc CXX=$(CROSS_$(1))g++ AR=$(CROSS_$(1))ar \
	NM=$(CROSS_$(1))nm OBJCOPY=$(CROSS_$(1))objcopy \
	LDFLAGS="$(LDFLAGS) $(LDFLAGS_$(1))" RUN=$(QEMU_$(1)) EMULATOR=$(QEMU_$(1))
# The Debian i686 compilers do their floating point on the x87; built for
# SSE2 arithmetic, both backends carry MXCSR as well (glibc's i386
# swapcontext does not: coroutine.cpp does it around the call), which
# test_fpu and the driver then check.
I686_SSE := -msse2 -mfpmath=sse

CROSS_TESTS := $(addprefix cross-test-,$(CROSS_SUITE_TARGETS) $(CROSS_DRIVER_TARGETS) i686-sse)
.PHONY: cross-test $(CROSS_TESTS) musl-test
cross-test: $(CROSS_TESTS)

$(addprefix cross-test-,$(CROSS_SUITE_TARGETS)): cross-test-%:
	@$(MAKE) --no-print-directory test $(call cross-vars,$*,$(B)/$*)

$(addprefix cross-test-,$(CROSS_DRIVER_TARGETS)): cross-test-%:
	@$(MAKE) --no-print-directory test-without-cmocka $(call cross-vars,$*,$(B)/$*)

cross-test-i686-sse:
	@for b in $(BACKENDS); do $(MAKE) --no-print-directory BACKEND=$$b TESTS="test_fpu driver" check \
		$(call cross-vars,i686,$(B)/i686-sse) CFLAGS="$(CFLAGS) $(I686_SSE)" CXXFLAGS="$(CXXFLAGS) $(I686_SSE)" \
		|| exit 1; done

# bench-ir for another target, aarch64 unless BENCH_TARGET says otherwise:
# callgrind does not run under qemu, so qemu counts (see bench/bench-ir.sh).
BENCH_TARGET ?= aarch64
.PHONY: bench-ir-cross
bench-ir-cross:
	$(MAKE) bench-programs $(call cross-vars,$(BENCH_TARGET),$(B)/$(BENCH_TARGET))
	QEMU=$(QEMU_$(BENCH_TARGET)) bench/bench-ir.sh $(foreach b,$(BACKENDS),$(B)/$(BENCH_TARGET)/$(b)/bench)

# ---- musl ------------------------------------------------------------------------
# x86_64 against musl (musl-tools), run natively.  musl has no swapcontext:
# the ucontext build must stop with its #error, the asm build must pass the
# checks that need no CMocka (none is built for musl): test/driver.c, with
# the guard and thread checks.  Not the exception checks (driver_cxx): there
# is no C++ runtime for musl (libstdc++ is built for glibc).  musl-gcc, the C
# driver, compiles coroutine.cpp and main.cpp as C++ against musl's headers;
# the C++ example is left out (libstdc++ is built for glibc).
MUSL_GCC ?= musl-gcc
musl-test:
	$(MUSL_GCC) -std=c++11 -fsyntax-only coroutine.cpp 2>&1 | grep -F 'build coroutine.cpp with -DCOROUTINE_ASM=1'
	@$(MAKE) --no-print-directory BACKEND=asm B=$(B)/musl CC=$(MUSL_GCC) CXX=$(MUSL_GCC) EXAMPLES_CXX= \
		TESTS=driver check-no-cxx-runtime check check-outputs

# ---- Windows x64 (MinGW-w64) under wine --------------------------------------------
# Needs g++-mingw-w64-x86-64, wine and wine64.  Everything is linked statically,
# so no DLL of MinGW's needs to be found.  CMocka is not packaged for MinGW:
# what runs is what test-without-cmocka runs (test/driver.c, and the demo's
# and the examples' outputs), test/win_stack.c, and the C++ exception tests
# built without CMocka (driver_cxx).  wine's state lives in the build
# folder; creating it takes seconds, once.
MINGW ?= x86_64-w64-mingw32-
WINE  ?= wine
WIN_B := $(B)/windows
WINEPREFIX_DIR := $(CURDIR)/$(WIN_B)/wineprefix
WINE_RUN := env WINEPREFIX=$(WINEPREFIX_DIR) WINEDEBUG=-all $(WINE)
# __USE_MINGW_ANSI_STDIO: C99 printf (%zu) in the test programs too.
WINDOWS_VARS := B=$(WIN_B) BACKEND=asm EXE=.exe TEXT_CRLF=1 RUN="$(WINE_RUN)" \
	CC=$(MINGW)gcc CXX=$(MINGW)g++ AR=$(MINGW)ar \
	CPPFLAGS="$(CPPFLAGS) -D__USE_MINGW_ANSI_STDIO=1" LDFLAGS="$(LDFLAGS) -static"

.PHONY: windows-test

$(WINEPREFIX_DIR)/system.reg:
	mkdir -p $(WINEPREFIX_DIR)
	$(WINE_RUN) wineboot --init >/dev/null 2>&1

windows-test: $(WINEPREFIX_DIR)/system.reg
	@$(MAKE) --no-print-directory $(WINDOWS_VARS) TESTS="driver win_stack driver_cxx" check check-outputs
	@$(MAKE) --no-print-directory windows-dll-test
	@$(MAKE) --no-print-directory windows-test-runtime-dll

# libcoroutine.dll as CMake and Meson build it, and programs linked with it
# or with the static library, import no DLL of MinGW's and run under wine
# with the DLL alone beside them (test/windows_dll.sh; needs cmake, meson,
# ninja-build too).
.PHONY: windows-dll-test
windows-dll-test: $(WINEPREFIX_DIR)/system.reg
	test/windows_dll.sh $(MINGW) $(WIN_B)/dll $(WINE_RUN)

# The C++ exception tests linked against MinGW's libstdc++-6.dll (and
# libgcc_s_seh-1.dll, found through WINEPATH) instead of statically: the
# library must find the runtime's exception state in the DLL at run time.
MINGW_RUNTIME_DIR = $(dir $(shell $(MINGW)g++ -print-file-name=libstdc++-6.dll))

# And test_late_runtime's twin: a C program, linked with the C driver and
# importing no C++ runtime, loads a C++ DLL built against libstdc++-6.dll.
.PHONY: windows-test-runtime-dll
windows-test-runtime-dll: $(WINEPREFIX_DIR)/system.reg
	@$(MAKE) --no-print-directory $(WINDOWS_VARS) B=$(WIN_B)/runtime-dll LDFLAGS="$(LDFLAGS)" \
		RUN="env WINEPATH=$(MINGW_RUNTIME_DIR) $(WINE_RUN)" TESTS="driver_cxx late_runtime" check

# late_runtime: test_late_runtime.c without CMocka (test/plain_suite.h).  A
# DLL calls functions of the program that loads it through the program's
# import library: the program exports its symbols and writes one, which
# late_runtime_plugin.dll then links against, built with it.
$(O)/late_runtime.o: test/test_late_runtime.c coroutine.h $(wildcard test/*.h)
	@mkdir -p $(@D)
	$(CC) -DTEST_PLAIN $(CPPFLAGS) $(DEFS_$(BACKEND)) $(WARN) $(CFLAGS) -I. -c $< -o $@

$(O)/late_runtime$(EXE): $(O)/late_runtime.o $(O)/libcoroutine.a test/late_runtime_plugin.cpp test/late_runtime.h
	$(CLINK) $(LDFLAGS) $(O)/late_runtime.o $(O)/libcoroutine.a \
		-Wl,--export-all-symbols,--out-implib,$@.a -o $@
	@if $(MINGW)objdump -p $@ | grep -i 'DLL Name: lib\(stdc++\|c++\)'; then \
		echo "$@ imports the C++ runtime above: it must get one only with the DLL it loads"; \
		rm -f $@; exit 1; fi
	$(CXX) $(CPPFLAGS) $(WARN) $(CXXFLAGS) -I. -shared $(LDFLAGS) test/late_runtime_plugin.cpp $@.a \
		-o $(@D)/late_runtime_plugin.dll

# ---- Windows x64, Microsoft's ABI (cl.exe, clang-cl) under wine ------------------
# cl.exe does not run here.  What does: its view of coroutine.cpp (the file
# preprocessed as cl.exe sees it, _MSC_VER and neither __GNUC__ nor
# __clang__, must hold no GNU-only spelling in its own lines), and the
# ABI, through clang for x86_64-pc-windows-msvc (what clang-cl runs): the
# library, the demo, the C examples, driver, win_stack and msvc_exceptions,
# linked by lld-link against the MSVC C runtime's interface as wine
# provides it (headers: libwine-dev; import libraries and mainCRTStartup:
# wine64-tools), run under wine, outputs as on Linux.  Twice: with
# asm_switch.asm (llvm-ml) and the library in cl.exe's spellings
# (COROUTINE_MICROSOFT_SPELLINGS), as a cl.exe user builds it; and with
# asm_switch.S and the GNU spellings, as a clang-cl user can.  The two
# switch objects must also be the same instructions (test/masm_twin_check.sh).
# No C++ standard library is built for this target here: the C++ example
# is left out.  Needs clang lld llvm libwine-dev wine64-tools wine wine64.
MSVC_B := $(B)/msvc
WINE_INCLUDE ?= /usr/include/wine/wine
WINE_LIBDIR  ?= /usr/lib/x86_64-linux-gnu/wine/x86_64-windows
MSVC_CC := clang --target=x86_64-pc-windows-msvc
# Wine's headers instead of clang's search path (clang's own stddef.h and
# intrinsics stay); the UCRT's declarations; wine's winnt.h defines
# _InterlockedCompareExchange128, which clang has built in.
MSVC_CPPFLAGS := -nostdlibinc -isystem $(WINE_INCLUDE)/msvcrt -isystem $(WINE_INCLUDE)/windows -D_UCRT \
	-D_InterlockedCompareExchange128=wine_InterlockedCompareExchange128
MSVC_LIBS := $(addprefix $(WINE_LIBDIR)/lib,winecrt0.a ucrtbase.a vcruntime140.a kernel32.a)
# The C runtime has the math functions: an empty m.lib answers -lm, as
# MinGW's empty libm.a does.
MSVC_LDFLAGS := -fuse-ld=lld -nostdlib -Wl,-entry:mainCRTStartup $(MSVC_B)/msvc_crt.o $(MSVC_LIBS) -L$(MSVC_B)
# cl.exe's spellings, compiled by clang: wine's intrin.h does not declare
# _BitScanForward64 (Microsoft's does), so clang declares it itself.
MSVC_SPELLINGS := CPPFLAGS="$(CPPFLAGS) $(MSVC_CPPFLAGS) -DCOROUTINE_MICROSOFT_SPELLINGS=1" \
	CXXFLAGS="$(CXXFLAGS) -Wno-implicit-function-declaration"
MSVC_VARS = BACKEND=asm EXE=.exe TEXT_CRLF=1 RUN="$(WINE_RUN)" EXAMPLES_CXX= \
	CC="$(MSVC_CC)" CXX="$(MSVC_CC)" CLINK="$(MSVC_CC)" AR=llvm-ar LDFLAGS="$(MSVC_LDFLAGS)"
# GNU-only spellings cl.exe would reject.
GNU_ONLY := __attribute__|__builtin_|__asm|(^|[^_[:alnum:]])asm *\(|__thread|typeof|__extension__|\(\{|__label__|__int128|__inline__|__restrict__

.PHONY: windows-msvc-test msvc-view
msvc-view:
	@mkdir -p $(MSVC_B)
	$(MSVC_CC) -E -x c++ -U__GNUC__ -U__clang__ $(MSVC_CPPFLAGS) $(DEFS_asm) coroutine.cpp -o $(MSVC_B)/cl-view.ii
	@awk '/^# [0-9]+ "/ { own = $$3 == "\"coroutine.cpp\""; next } own' $(MSVC_B)/cl-view.ii > $(MSVC_B)/cl-view.own
	@if grep -n -E '$(GNU_ONLY)' $(MSVC_B)/cl-view.own; then \
		echo "coroutine.cpp as cl.exe sees it: the GNU-only spellings above"; exit 1; fi
	@echo "coroutine.cpp as cl.exe sees it: $$(wc -l < $(MSVC_B)/cl-view.own) lines, no GNU-only spelling"

# Every program links it (through LDFLAGS, so not among their prerequisites):
# a new one takes the programs linked against the old one away.
$(MSVC_B)/msvc_crt.o: test/msvc_crt.c
	@mkdir -p $(@D)
	$(MSVC_CC) $(MSVC_CPPFLAGS) $(WARN) -O2 -c $< -o $@
	find $(MSVC_B) -name '*.exe' -delete

$(MSVC_B)/m.lib:
	@mkdir -p $(@D)
	llvm-ar rcs $@

windows-msvc-test: msvc-view $(MSVC_B)/msvc_crt.o $(MSVC_B)/m.lib $(WINEPREFIX_DIR)/system.reg
	@$(MAKE) --no-print-directory $(MSVC_VARS) B=$(MSVC_B)/masm SWITCH=asm_switch.asm $(MSVC_SPELLINGS) \
		TESTS="driver win_stack msvc_exceptions" check check-outputs
	@$(MAKE) --no-print-directory $(MSVC_VARS) B=$(MSVC_B)/gas CPPFLAGS="$(CPPFLAGS) $(MSVC_CPPFLAGS)" \
		TESTS="driver win_stack msvc_exceptions" check check-outputs
	test/masm_twin_check.sh $(MSVC_B)/gas/asm/asm_switch.o $(MSVC_B)/masm/asm/asm_switch.o $(MSVC_B)/twin

# ---- WebAssembly (Emscripten) under node ------------------------------------------
# Needs emscripten and nodejs.  coroutine.cpp picks Emscripten's fibers by
# itself; programs link with -sASYNCIFY (README).  CMocka is not packaged
# for wasm (and its tests fork): what runs is what test-without-cmocka runs,
# test/driver.c and the demo's and examples' outputs, then
# test/wasm_faults.c.  -sNODERAWFS lets the script example read its files
# from the host.  Debian's emcc (3.1.6) finds node's acorn through
# NODE_PATH; its loader would fetch() the .wasm under node 18 and later,
# hence --no-experimental-fetch.  Its system libraries come built, in a
# frozen cache under /usr/share/emscripten (so no EM_CACHE: another cache
# would have to be built, which the frozen setting forbids).  WASM_OPT
# picks the optimisation.
EMCC     ?= emcc
EMXX     ?= em++
EMAR     ?= emar
NODE     ?= node
WASM_OPT ?= -O2
WASM_B   := $(B)/wasm$(WASM_OPT)
WASM_LDFLAGS := -sASYNCIFY -sALLOW_MEMORY_GROWTH=1
WASM_RUN := $(NODE) --no-experimental-fetch
WASM_VARS = B=$(WASM_B) BACKEND=fiber EXE=.js CC=$(EMCC) CXX=$(EMXX) AR=$(EMAR) \
	CFLAGS="$(WASM_OPT)" CXXFLAGS="$(WASM_OPT)" LDFLAGS="$(WASM_OPT) $(WASM_LDFLAGS) -sNODERAWFS=1" \
	RUN="$(WASM_RUN)"
# make again with emcc and em++, which find node's acorn through NODE_PATH.
WASM_MAKE = NODE_PATH=$${NODE_PATH:-/usr/share/nodejs} $(MAKE) --no-print-directory $(WASM_VARS)

.PHONY: wasm-test
wasm-test:
	@$(WASM_MAKE) TESTS=driver check check-outputs
	@echo "== script nesting too deep (examples/deep.txt)"
	@$(WASM_RUN) $(WASM_B)/fiber/examples/script.js examples/deep.txt examples/scripts/hello.txt \
		> $(WASM_B)/script-deep.out 2> $(WASM_B)/script-deep.err; test $$? = 1
	@cmp examples/script-deep.expected $(WASM_B)/script-deep.out
	@cmp examples/script-deep.stderr $(WASM_B)/script-deep.err
	@$(WASM_MAKE) B=$(WASM_B)/faults CPPFLAGS="$(CPPFLAGS) -DCOROUTINE_ASYNCIFY_SIZE=4096" $(WASM_B)/faults/fiber/wasm_faults.js
	@echo "== test/wasm_faults.sh"
	@test/wasm_faults.sh "$(WASM_RUN)" $(WASM_B)/faults/fiber/wasm_faults.js

# The wasm twin of bench: the fiber backend beside Emscripten's own fiber
# round trip, under node, built with WASM_OPT (-O2 unless given).
.PHONY: bench-wasm
bench-wasm:
	@$(WASM_MAKE) $(WASM_B)/fiber/bench_wasm.js
	$(WASM_RUN) $(WASM_B)/fiber/bench_wasm.js

$(O)/bench_wasm.js: bench/bench_wasm.c coroutine.h $(O)/libcoroutine.a
	$(CC) -I. $(WARN) $(CFLAGS) $(LDFLAGS) $< $(O)/libcoroutine.a -o $@

# What stops a wasm program: built with a 4 KiB asyncify area, and with
# Emscripten's check of the stack pointer in every function.
$(O)/wasm_faults.js: $(O)/wasm_faults.o $(O)/libcoroutine.a
	$(CLINK) $(LDFLAGS) -sSTACK_OVERFLOW_CHECK=2 $^ -o $@

# ---- macOS (Mach-O): assembled and compared, not run ----------------------------
# Needs clang and llvm (llvm-nm, llvm-objdump).  Each Apple target's object
# must have the entry points and the instructions of the ELF object of the
# same architecture (test/macos_check.sh).
MACOS_TARGETS := x86_64-apple-macos10.15:x86_64-linux-gnu arm64-apple-macos11:aarch64-linux-gnu

.PHONY: macos-check
macos-check:
	@for t in $(MACOS_TARGETS); do test/macos_check.sh asm_switch.S $(B)/macos $${t%%:*} $${t#*:} || exit 1; done

# ---- Memory-safety tools -------------------------------------------------------
# sanitize: the suite under ASan+UBSan; valgrind: under memcheck.  Both run
# both backends, then deliberately buggy programs (test/bugs/): the target
# fails if the tool stays silent about a real bug in a coroutine.
SANITIZE := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
# Tests whose children must die of SIGSEGV or SIGABRT restore the default
# handlers, ASan's included, so no ASAN_OPTIONS are needed for them.  Leak
# checking is on by default on x86_64; it is asked for by name for others.
# detect_stack_use_after_return moves locals to per-fiber "fake stacks" on
# the heap: the library must free those of coroutines closed while
# suspended, which the leak check then checks.
export ASAN_OPTIONS ?= detect_leaks=1:detect_stack_use_after_return=1
export UBSAN_OPTIONS ?= print_stacktrace=1
# --child-silent-after-fork: misuse tests fork children that abort on
# purpose, with schedules still open.  The library registers the run stack
# with memcheck, so no --max-stackframe is needed to tell switches from
# huge frames.
VALGRIND := valgrind -q --error-exitcode=1 --leak-check=full \
	--errors-for-leak-kinds=definite,indirect --show-leak-kinds=definite,indirect \
	--child-silent-after-fork=yes
EXPECT_REPORT := test/bugs/expect_report.sh
ASAN_BUGS := heap_overflow:heap-buffer-overflow stack_overflow:stack-buffer-overflow \
	stack_overflow_across_yield:stack-buffer-overflow
# BUGS is a list of words: dots stand for the spaces of a report (grep regex).
MEMCHECK_BUGS := uninitialised:Conditional.jump.or.move.depends.on.uninitialised.value

$(O)/bugs/%: $(O)/bugs/%.o $(O)/libcoroutine.a
	$(CLINK) $(LDFLAGS) $^ -o $@

# Runs each bug program of BUGS (name:report) under $(RUN), expecting the report.
check-bugs:
	@for bug in $(BUGS); do $(MAKE) --no-print-directory $(O)/bugs/$${bug%%:*} && \
		$(EXPECT_REPORT) "$${bug#*:}" $(RUN) $(O)/bugs/$${bug%%:*} || exit 1; done

# Sanitized programs are linked with the C++ driver: clang's
# -fsanitize=function (part of "undefined") needs the C++ runtime.  The build
# directory is named after the compiler, so gcc and clang builds coexist.
SANITIZE_VARS = B=$(B)/asan-$(notdir $(CC)) CFLAGS="$(CFLAGS) $(SANITIZE)" \
	CXXFLAGS="$(CXXFLAGS) $(SANITIZE)" LDFLAGS="$(LDFLAGS) $(SANITIZE)" CLINK=$(CXX)

.PHONY: check-bugs sanitize valgrind
sanitize:
	@for b in $(BACKENDS); do $(MAKE) --no-print-directory BACKEND=$$b $(SANITIZE_VARS) check \
		&& $(MAKE) --no-print-directory BACKEND=$$b $(SANITIZE_VARS) BUGS="$(ASAN_BUGS)" check-bugs \
		|| exit 1; done

valgrind:
	@for b in $(BACKENDS); do $(MAKE) --no-print-directory BACKEND=$$b RUN="$(VALGRIND)" check \
		&& $(MAKE) --no-print-directory BACKEND=$$b RUN="$(VALGRIND)" BUGS="$(MEMCHECK_BUGS)" check-bugs \
		|| exit 1; done

# ---- Fuzzing -------------------------------------------------------------------
# libFuzzer turns its bytes into programs of new/resume/yield/status (see
# test/model.h), run against the library and the reference model, SECONDS
# per backend.  It needs clang, whatever CC and CXX are.
FUZZ := -fsanitize=address,undefined -fno-sanitize-recover=all -g -O1
SECONDS ?= 60

$(O)/fuzz_model.o: fuzz/fuzz_model.c test/model.c test/model.h coroutine.h
	@mkdir -p $(@D)
	$(CC) $(WARN) $(CFLAGS) -fsanitize=fuzzer -I. -Itest -c $< -o $@

$(O)/fuzz_model: $(O)/fuzz_model.o $(O)/libcoroutine.a
	$(CXX) $(CFLAGS) -fsanitize=fuzzer $^ -o $@

.PHONY: fuzz
fuzz:
	@for b in $(BACKENDS); do \
		$(MAKE) --no-print-directory BACKEND=$$b B=$(B)/fuzz CC=clang CXX=clang++ \
			CFLAGS="$(FUZZ)" CXXFLAGS="$(FUZZ) -fsanitize=fuzzer-no-link" $(B)/fuzz/$$b/fuzz_model && \
		mkdir -p $(B)/fuzz/$$b/corpus && \
		$(B)/fuzz/$$b/fuzz_model -max_total_time=$(SECONDS) -print_final_stats=1 $(B)/fuzz/$$b/corpus \
		|| exit 1; done

# ---- The build matrix ----------------------------------------------------------
# -Werror builds and runs of the whole suite with g++ and clang++ at each of
# these flag sets.  The dummy-variable save is what it guards: it is the part
# most likely to break under another optimisation level or hardening flag.
MATRIX_SETS := O0 O2 O3 protectall stackclash hardened
MATRIX_FLAGS_O0 := -O0 -g
MATRIX_FLAGS_O2 := -O2 -g
MATRIX_FLAGS_O3 := -O3 -g
MATRIX_FLAGS_protectall := -O2 -g -fstack-protector-all
# What README tells users to build coroutine code with: probes in every frame.
MATRIX_FLAGS_stackclash := -O2 -g -fstack-clash-protection
# Debian's hardening flags (dpkg-buildflags is in dpkg-dev).  Deferred (=):
# dpkg-buildflags runs only for the matrix.
HARDENING = DEB_BUILD_MAINT_OPTIONS=hardening=+all dpkg-buildflags --get
MATRIX_FLAGS_hardened = $(shell $(HARDENING) CXXFLAGS)
MATRIX_CPPFLAGS_hardened = $(shell $(HARDENING) CPPFLAGS)
MATRIX_LDFLAGS_hardened = $(shell $(HARDENING) LDFLAGS)
MATRIX := $(foreach s,$(MATRIX_SETS),matrix-gcc-$(s) matrix-clang-$(s))
MATRIX_STDS := c++11 c++14 c++17 c++20

# matrix-COMPILER-SET: COMPILER is gcc or clang (their C++ drivers follow).
CXX_FOR_gcc := g++
CXX_FOR_clang := clang++
.PHONY: matrix matrix-std $(MATRIX)
matrix: $(MATRIX) matrix-std

$(MATRIX): matrix-%:
	@echo "== $@"
	@$(MAKE) -s --no-print-directory test B=$(B)/matrix/$* \
		CC=$(word 1,$(subst -, ,$*)) CXX=$(CXX_FOR_$(word 1,$(subst -, ,$*))) \
		WARN="$(WARN) -Werror" CPPFLAGS="$(MATRIX_CPPFLAGS_$(word 2,$(subst -, ,$*)))" \
		CFLAGS="$(MATRIX_FLAGS_$(word 2,$(subst -, ,$*)))" \
		CXXFLAGS="$(MATRIX_FLAGS_$(word 2,$(subst -, ,$*)))" \
		LDFLAGS="$(MATRIX_LDFLAGS_$(word 2,$(subst -, ,$*)))" > $(B)/matrix-$*.log 2>&1 \
		|| { cat $(B)/matrix-$*.log; exit 1; }

# The library alone in every standard it supports, compile-only.
matrix-std:
	@for cxx in g++ clang++; do for std in $(MATRIX_STDS); do for defs in "" "$(DEFS_asm)"; do \
	  echo "== $$cxx -std=$$std $$defs"; \
	  $$cxx -std=$$std $$defs -fno-exceptions -fno-rtti $(WARN) -Werror -O2 -c coroutine.cpp -o /dev/null || exit 1; \
	done; done; done

# ---- Benchmarks ----------------------------------------------------------------
# `make bench`: timings of both backends beside their floors (Boost.Context's
# fcontext for a switch, two memcpy(N) for a copy): times as medians of
# interleaved repeats, ratios as medians of per-repeat ratios (see
# bench/bench.cpp), in build/bench.csv and, with gnuplot, build/bench.png.  `make bench-ir`:
# instructions per operation, counted by callgrind.  Built with -O2 whatever
# CXXFLAGS says.  Without libboost-context-dev the bench builds all the same,
# without the fcontext floor (a compile-and-link test decides).
BENCH_FCONTEXT_TEST = printf '\#include <boost/context/detail/fcontext.hpp>\nint main() { return boost::context::detail::make_fcontext(0, 0, 0) != 0; }\n' \
	| $(CXX) -x c++ - -lboost_context -o /dev/null 2>/dev/null
BENCH_FCONTEXT = $(shell $(BENCH_FCONTEXT_TEST) && echo 1 || echo 0)

# The asm bench also links a second copy of the library whose x86 switch
# reloads the whole saved FP state at every switch (asm_switch.S's ASM_SWITCH_FP_RELOAD),
# every symbol it defines renamed alt_..., so that both switches are timed
# side by side in one run.  An archive: a bench that does not use it (not
# x86) links none of it.  Without objcopy (macOS), no second copy.
BENCH_ALT_asm := $(if $(shell command -v $(OBJCOPY)),$(O)/libcoroutine-alt.a)
$(O)/bench-alt/asm_switch.o: asm_switch.S
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -DASM_SWITCH_FP_RELOAD=1 -c $< -o $@

$(O)/libcoroutine-alt.a: $(O)/coroutine.o $(O)/bench-alt/asm_switch.o
	$(CC) -r -nostdlib $^ -o $(O)/bench-alt/both.o
	$(NM) -g --defined-only $(O)/bench-alt/both.o | awk '{ print $$3, "alt_" $$3 }' > $(O)/bench-alt/names
	$(OBJCOPY) --redefine-syms=$(O)/bench-alt/names $(O)/bench-alt/both.o $(O)/bench-alt/alt.o
	rm -f $@
	$(AR) rcs $@ $(O)/bench-alt/alt.o

$(O)/bench: bench/bench.cpp coroutine.h $(O)/libcoroutine.a $(BENCH_ALT_$(BACKEND))
	$(CXX) $(CPPFLAGS) -I. -DBENCH_BACKEND='"$(BACKEND)"' -DBENCH_HAVE_FCONTEXT=$(BENCH_FCONTEXT) \
		-DBENCH_HAVE_ALT=$(if $(BENCH_ALT_$(BACKEND)),1,0) -std=c++11 \
		$(WARN) $(CXXFLAGS) -O2 $(LDFLAGS) $< $(O)/libcoroutine.a $(BENCH_ALT_$(BACKEND)) \
		$(if $(filter 1,$(BENCH_FCONTEXT)),-lboost_context) -o $@

.PHONY: bench bench-ir bench-programs
bench-programs:
	@for b in $(BACKENDS); do $(MAKE) --no-print-directory BACKEND=$$b $(B)/$$b/bench || exit 1; done

bench: bench-programs
	echo "backend,variant,n,unit,median,min,max,floor,floor_median,ratio,ratio_q1,ratio_q3" > $(B)/bench.csv
	@for b in $(BACKENDS); do $(B)/$$b/bench $(B)/bench.csv || exit 1; done
	@if command -v gnuplot >/dev/null; then gnuplot bench/plot.gp && echo "wrote $(B)/bench.csv, $(B)/bench.png"; \
	else echo "wrote $(B)/bench.csv; no gnuplot, no $(B)/bench.png"; fi

bench-ir: bench-programs
	bench/bench-ir.sh $(foreach b,$(BACKENDS),$(B)/$(b)/bench)

# ---- Consumers -----------------------------------------------------------------
# C projects that get the library through CMake (add_subdirectory,
# FetchContent, find_package), Meson (a subproject) and pkg-config, static
# and shared, both backends, installed and cross-built through the shipped
# toolchain and cross files; see test/consumers/run.sh.
consumer-test:
	test/consumers/run.sh

clean:
	rm -rf build main libcoroutine.a

help:
	@echo "make              build the demo (main) and libcoroutine.a; ASM=1 for the assembly switch"
	@echo "make run          build and run the demo"
	@echo "make examples     build the examples (examples/) for the selected backend"
	@echo "make test         the CMocka suite against both backends (BACKENDS=...), and test_misuse"
	@echo "                  and test_alloc against an NDEBUG build; fails if the library needs libstdc++"
	@echo "                  or if README's walkthrough is not what main --trace prints (readme-check)"
	@echo "make readme-trace rewrite README's trace excerpt and frame table from main --trace"
	@echo "                  (g++ -O2 -g, x86_64, ucontext, whatever CXXFLAGS say)"
	@echo "make trace-page-test  main --trace=html's page in headless Chromium: what it draws at several"
	@echo "                  steps of both walkthroughs must be what main --trace and main --trace=trees"
	@echo "                  say; screenshots in build/trace-page/"
	@echo "make shared       $(O)/$(SHLIB) and its links, exporting coroutine_* only"
	@echo "make check-shared check that the shared library exports coroutine_* only, needs no libstdc++"
	@echo "make install      install header, static and shared library, pkg-config file (PREFIX, DESTDIR)"
	@echo "make uninstall    remove what install put there"
	@echo "make install-check  install into a scratch DESTDIR, build an example against it with pkg-config"
	@echo "make consumer-test  C projects using the library through CMake, Meson and pkg-config, built,"
	@echo "                  installed and cross-built (aarch64 under qemu, MinGW under wine);"
	@echo "                  the suite under Ninja Multi-Config (CROSS= COMBOS= select parts)"
	@echo "make cross-test   the suite for aarch64, armv7 and i686, driver and outputs for riscv64,"
	@echo "                  both backends, under qemu-user (-j2 runs two targets at a time)"
	@echo "make musl-test    the asm backend against musl: driver and outputs; ucontext must refuse"
	@echo "make test-without-cmocka  test/driver.c and the demo's and examples' outputs, both backends"
	@echo "make windows-test build for Windows x64 with MinGW-w64, run demo, examples, driver,"
	@echo "                  win_stack and the C++ exception tests under wine; windows-dll-test,"
	@echo "                  windows-test-runtime-dll"
	@echo "make windows-dll-test  libcoroutine.dll (CMake, Meson) and programs need no MinGW DLL"
	@echo "make windows-test-runtime-dll  the C++ exception tests against libstdc++-6.dll, and a C"
	@echo "                  program that loads a C++ DLL (late_runtime), under wine"
	@echo "make windows-msvc-test  coroutine.cpp as cl.exe preprocesses it; the MSVC ABI through clang"
	@echo "                  (asm_switch.asm by llvm-ml, and asm_switch.S): demo, examples, driver,"
	@echo "                  win_stack, C++ exceptions, run under wine"
	@echo "make wasm-test    build for WebAssembly with Emscripten, run demo, examples, driver and"
	@echo "                  wasm_faults under node (WASM_OPT=-O0..-O3, -O2 unless given)"
	@echo "make bench-wasm   time the fiber backend beside Emscripten's own fiber round trip, under node"
	@echo "make macos-check  assemble asm_switch.S for macOS x86_64 and arm64, compare with ELF"
	@echo "make sanitize     the suite under ASan+UBSan, both backends; ASan must catch test/bugs/"
	@echo "                  (CC=clang CXX=clang++ for clang's sanitizers)"
	@echo "make valgrind     the suite under valgrind memcheck, both backends; memcheck must catch test/bugs/"
	@echo "make fuzz         libFuzzer on random programs, SECONDS=60 per backend (needs clang)"
	@echo "make matrix       -Werror builds and runs: g++/clang++ x -O0/-O2/-O3/-fstack-protector-all/"
	@echo "                  -fstack-clash-protection/Debian hardening, and coroutine.cpp alone as C++11..C++20"
	@echo "make bench        time both backends beside their floors: build/bench.csv, build/bench.png"
	@echo "make bench-ir     instructions per operation of both backends, counted by callgrind"
	@echo "make bench-ir-cross  the same for aarch64 (BENCH_TARGET=armv7, i686...), counted by qemu"
	@echo "make clean        remove everything built"
