# mk/debug.mk - the debugger's commands (debug/coroutine-gdb.py), tried in gdb.

# ---- make debug-test -----------------------------------------------------------
# test/debug/waiting.c, stopped while its coroutines wait, in gdb's batch
# mode: each command's output is checked, live and on a core file taken
# there, and again stopped inside the library in the middle of switches;
# the program must run on as without gdb (test/debug/gdb_test.sh); what
# they say where they cannot (test/debug/gdb_refusals.sh) and while another
# thread runs, in non-stop mode (test/debug/gdb_nonstop.sh); two copies of
# the library in one process (test/debug/gdb_two_copies.sh); clones listed
# like any coroutine (test/debug/clones.c, test/debug/clones_test.sh, in gdb
# on every build and in lldb); an engine in C++ with threads and a deleted
# coroutine (test/debug/engine.cpp, test/debug/engine_test.sh, in gdb and
# lldb); and the session of docs/debugging.md is what gdb prints
# (test/debug/readme_session.sh).
# Built with -g by gcc and clang at -O0, -O1 and -O2 (program and library),
# against both backends, natively; and the -O2 builds for aarch64, under
# qemu-user's gdb stub with gdb-multiarch.  Each build in its own directory.
DEBUG_LEVELS    := O0 O1 O2
DEBUG_COMPILERS := gcc clang
DEBUG_NATIVE    := $(foreach b,$(BACKENDS),$(foreach c,$(DEBUG_COMPILERS),$(foreach l,$(DEBUG_LEVELS),$(b)-$(c)-$(l))))
DEBUG_AARCH64   := $(foreach b,$(BACKENDS),$(b)-aarch64-O2)
DEBUG_AARCH64_TOOLS := $(shell for t in qemu-aarch64 gdb-multiarch aarch64-linux-gnu-gcc; do command -v $$t || echo no; done)
DEBUG_BUILDS    := $(DEBUG_NATIVE) $(if $(filter no,$(DEBUG_AARCH64_TOOLS)),,$(DEBUG_AARCH64))
DEBUG_CC_gcc      := gcc
DEBUG_CXX_gcc     := g++
DEBUG_CC_clang    := clang
DEBUG_CXX_clang   := clang++
DEBUG_CC_aarch64  := aarch64-linux-gnu-gcc
DEBUG_CXX_aarch64 := aarch64-linux-gnu-g++
# A build's name is backend-compiler-level.
debug_part = $(word $(2),$(subst -, ,$(1)))

$(B)/debug/%/waiting: test/debug/waiting.c coroutine.cpp coroutine.h asm_switch.S
	@mkdir -p $(@D)
	$(DEBUG_CXX_$(call debug_part,$*,2)) $(DEFS_$(call debug_part,$*,1)) $(LIBFLAGS) $(WARN) -g \
		-$(call debug_part,$*,3) -c coroutine.cpp -o $(@D)/coroutine.o
	$(if $(filter asm,$(call debug_part,$*,1)),$(DEBUG_CC_$(call debug_part,$*,2)) -g -c asm_switch.S -o $(@D)/asm_switch.o)
	$(DEBUG_CC_$(call debug_part,$*,2)) -I. $(WARN) -g -$(call debug_part,$*,3) test/debug/waiting.c \
		$(@D)/coroutine.o $(if $(filter asm,$(call debug_part,$*,1)),$(@D)/asm_switch.o) -o $@

# A thread that runs a coroutine while main is stopped (non-stop mode), on
# four of the builds: both backends, both compilers, each level.
DEBUG_NONSTOP := asm-gcc-O0 ucontext-gcc-O2 asm-clang-O2 ucontext-clang-O1
$(B)/debug/%/nonstop: test/debug/nonstop.c $(B)/debug/%/waiting
	$(DEBUG_CC_$(call debug_part,$*,2)) -I. $(WARN) -g -$(call debug_part,$*,3) test/debug/nonstop.c \
		$(@D)/coroutine.o $(if $(filter asm,$(call debug_part,$*,1)),$(@D)/asm_switch.o) -lpthread -o $@

# Coroutines and their clones, on every build.
$(B)/debug/%/clones: test/debug/clones.c $(B)/debug/%/waiting
	$(DEBUG_CC_$(call debug_part,$*,2)) -I. $(WARN) -g -$(call debug_part,$*,3) test/debug/clones.c \
		$(@D)/coroutine.o $(if $(filter asm,$(call debug_part,$*,1)),$(@D)/asm_switch.o) -o $@

$(B)/debug/%/clones-checked: $(B)/debug/%/clones debug/coroutine-gdb.py test/debug/clones_test.sh
	@$(DEBUG_RUN_$(call debug_part,$*,2)) test/debug/clones_test.sh gdb $< $(@D)/clones-out

# An engine in C++ (test/debug/engine.cpp): 50 coroutines, one deleted,
# and a second thread; in gdb on the builds of the non-stop test, with its
# core file, and in lldb on lldb's (test/debug/engine_test.sh).
$(B)/debug/%/engine: test/debug/engine.cpp $(B)/debug/%/waiting
	$(DEBUG_CXX_$(call debug_part,$*,2)) -I. $(WARN) -g -$(call debug_part,$*,3) test/debug/engine.cpp \
		$(@D)/coroutine.o $(if $(filter asm,$(call debug_part,$*,1)),$(@D)/asm_switch.o) -lpthread -o $@

$(B)/debug/%/engine-checked: $(B)/debug/%/engine debug/coroutine-gdb.py test/debug/engine_test.sh
	@test/debug/engine_test.sh gdb $< $(@D)/engine-out

$(B)/debug/%/nonstop-checked: $(B)/debug/%/nonstop debug/coroutine-gdb.py test/debug/gdb_nonstop.sh
	@test/debug/gdb_nonstop.sh $< $(@D)/nonstop-out

# What the commands say where they cannot show anything: a build without
# -g, and one whose library has no debugger's view (the section cut out).
$(B)/debug/refusals/no-g: test/debug/waiting.c coroutine.cpp coroutine.h
	@mkdir -p $(@D)
	$(CXX) $(LIBFLAGS) -O2 -c coroutine.cpp -o $(@D)/coroutine-no-g.o
	$(CC) -I. -O2 test/debug/waiting.c $(@D)/coroutine-no-g.o -o $@

$(B)/debug/refusals/no-hook: test/debug/waiting.c coroutine.cpp coroutine.h
	@mkdir -p $(@D)
	sed "/^\/\* ---- The debugger's view/,\$$d" coroutine.cpp > $(@D)/coroutine.cpp
	$(CXX) -I. $(LIBFLAGS) -g -O2 -c $(@D)/coroutine.cpp -o $(@D)/coroutine-no-hook.o
	$(CC) -I. -g -O2 test/debug/waiting.c $(@D)/coroutine-no-hook.o -o $@

DEBUG_REFUSALS := $(B)/debug/ucontext-gcc-O2/waiting $(B)/debug/refusals/no-g $(B)/debug/refusals/no-hook

# The aarch64 builds run under qemu-aarch64, whose gdb stub gdb-multiarch drives.
DEBUG_RUN_aarch64 = EMULATOR=qemu-aarch64 SYSROOT=/usr/aarch64-linux-gnu GDB=gdb-multiarch

# A build's check, run every time: the file is never made (make -j runs
# the checks side by side).
$(B)/debug/%/checked: $(B)/debug/%/waiting debug/coroutine-gdb.py test/debug/gdb_test.sh coroutine.cpp
	@$(DEBUG_RUN_$(call debug_part,$*,2)) test/debug/gdb_test.sh $< $(@D)/out $(filter -O0,-$(call debug_part,$*,3))

# Two copies of the library in one process: the program's (asm) and a
# plugin's (ucontext, its symbols hidden), each with a coroutine waiting.
TWO_COPIES := $(B)/debug/two-copies
$(TWO_COPIES)/plugin.so: test/debug/plugin.c coroutine.cpp coroutine.h
	@mkdir -p $(@D)
	$(CXX) $(LIBFLAGS) -g -O2 -fPIC -fvisibility=hidden -c coroutine.cpp -o $(@D)/plugin-coroutine.o
	$(CC) -I. $(WARN) -g -O2 -fPIC -shared test/debug/plugin.c $(@D)/plugin-coroutine.o -o $@

$(TWO_COPIES)/two_copies: test/debug/two_copies.c coroutine.cpp coroutine.h asm_switch.S
	@mkdir -p $(@D)
	$(CXX) $(DEFS_asm) $(LIBFLAGS) -g -O2 -c coroutine.cpp -o $(@D)/host-coroutine.o
	$(CC) -g -c asm_switch.S -o $(@D)/asm_switch.o
	$(CC) -I. $(WARN) -g -O2 test/debug/two_copies.c $(@D)/host-coroutine.o $(@D)/asm_switch.o -ldl -o $@

# The demo, a program not written for the commands, at -O0 (where gdb
# selects an outer frame after a write that moves the frame pointer).
$(B)/debug/demo/%/main: main.cpp trace.cpp trace_frames.cpp coroutine.cpp coroutine.h asm_switch.S
	@$(MAKE) --no-print-directory BACKEND=$* B=$(B)/debug/demo CFLAGS="-O0 -g" CXXFLAGS="-O0 -g" $@

$(B)/debug/demo/%/demo-checked: $(B)/debug/demo/%/main debug/coroutine-gdb.py test/debug/gdb_demo.sh
	@test/debug/gdb_demo.sh $< $(@D)/out

# lldb's twin (debug/coroutine_lldb.py) on a build of each backend and
# compiler, where lldb is installed; Debian's finds its Python module only
# through PYTHONPATH.
DEBUG_LLDB_BUILDS := $(if $(shell command -v lldb),ucontext-gcc-O0 asm-gcc-O2 ucontext-clang-O2 asm-clang-O1)
LLDB_PYTHONPATH   ?= /usr/lib/llvm-14/lib/python3.11/dist-packages

$(B)/debug/%/lldb-checked: $(B)/debug/%/waiting $(B)/debug/%/clones $(B)/debug/%/engine debug/coroutine_lldb.py \
		test/debug/lldb_test.sh test/debug/clones_test.sh test/debug/engine_test.sh
	@PYTHONPATH=$(LLDB_PYTHONPATH) test/debug/lldb_test.sh $< $(@D)/lldb
	@PYTHONPATH=$(LLDB_PYTHONPATH) test/debug/clones_test.sh lldb $(@D)/clones $(@D)/lldb-clones
	@PYTHONPATH=$(LLDB_PYTHONPATH) test/debug/engine_test.sh lldb $(@D)/engine $(@D)/lldb-engine

.PHONY: debug-test
debug-test: $(foreach d,$(DEBUG_BUILDS),$(B)/debug/$(d)/checked $(B)/debug/$(d)/clones-checked) $(DEBUG_REFUSALS) \
		$(foreach d,$(DEBUG_NONSTOP),$(B)/debug/$(d)/nonstop-checked $(B)/debug/$(d)/engine-checked) \
		$(foreach b,$(BACKENDS),$(B)/debug/demo/$(b)/demo-checked) \
		$(foreach d,$(DEBUG_LLDB_BUILDS),$(B)/debug/$(d)/lldb-checked) $(TWO_COPIES)/two_copies $(TWO_COPIES)/plugin.so
	@test/debug/gdb_refusals.sh $(DEBUG_REFUSALS) $(B)/debug/refusals/out
	@test/debug/gdb_two_copies.sh $(TWO_COPIES)/two_copies $(TWO_COPIES)/plugin.so $(TWO_COPIES)/out
	@test/debug/readme_session.sh check $(B)/debug/readme
	@echo "debug-test: $(words $(DEBUG_BUILDS)) builds passed in gdb ($(words $(DEBUG_NONSTOP)) in non-stop mode and with the engine too), $(words $(DEBUG_LLDB_BUILDS)) in lldb$(if $(filter no,$(DEBUG_AARCH64_TOOLS)), (no aarch64: needs qemu-user gdb-multiarch g++-aarch64-linux-gnu))"
