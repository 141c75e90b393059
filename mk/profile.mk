# mk/profile.mk - the link from a coroutine's start to its resumer, seen by
# gdb and by perf (frames-test), and a profile of examples/game (profile-game,
# flamegraph).  See docs/profiling.md.

# ---- The programs ----------------------------------------------------------------
# examples/game played again and again (bench/profile_game.c), the library and
# the game built with frame pointers, which perf's default call graph walks
# (and the game with no inlining, so that each of its functions has a frame).
PROFILE_B     := $(B)/profile
PROFILE_FLAGS := -O2 -g -fno-omit-frame-pointer

$(PROFILE_B)/%/coroutine.o: coroutine.cpp coroutine.h
	@mkdir -p $(@D)
	$(CXX) $(DEFS_$*) $(LIBFLAGS) $(WARN) $(PROFILE_FLAGS) -c $< -o $@

$(PROFILE_B)/asm/asm_switch.o: asm_switch.S
	@mkdir -p $(@D)
	$(CC) $(PROFILE_FLAGS) -c $< -o $@

# A backend's objects: coroutine.o, and the switch's for asm.
PROFILE_OBJS_ucontext := $(PROFILE_B)/ucontext/coroutine.o
PROFILE_OBJS_asm      := $(PROFILE_B)/asm/coroutine.o $(PROFILE_B)/asm/asm_switch.o

$(PROFILE_B)/ucontext/game: $(PROFILE_OBJS_ucontext)
$(PROFILE_B)/asm/game: $(PROFILE_OBJS_asm)
$(PROFILE_B)/%/game: bench/profile_game.c examples/game.c coroutine.h
	$(CC) -I. $(WARN) $(PROFILE_FLAGS) -fno-inline $< $(filter %.o,$^) -o $@

# test/platform/resumers.c, for gdb: natively (with the objects above) and
# for aarch64, run under qemu-user's gdb stub, as debug-test does.
FRAMES_B := $(B)/frames
FRAMES_AARCH64_TOOLS := $(shell for t in qemu-aarch64 gdb-multiarch aarch64-linux-gnu-gcc; do command -v $$t || echo no; done)
FRAMES_ARCHS := x86_64 $(if $(filter no,$(FRAMES_AARCH64_TOOLS)),,aarch64)
FRAMES_CC_x86_64   := $(CC)
FRAMES_CC_aarch64  := aarch64-linux-gnu-gcc
FRAMES_CXX_aarch64 := aarch64-linux-gnu-g++
FRAMES_RUN_aarch64 := EMULATOR=qemu-aarch64 SYSROOT=/usr/aarch64-linux-gnu GDB=gdb-multiarch

$(FRAMES_B)/ucontext-x86_64/resumers: $(PROFILE_OBJS_ucontext)
$(FRAMES_B)/asm-x86_64/resumers: $(PROFILE_OBJS_asm)
$(FRAMES_B)/%-x86_64/resumers: test/platform/resumers.c test/support/resumers.h coroutine.h
	@mkdir -p $(@D)
	$(CC) -I. -Itest/support $(WARN) -O2 -g $< $(filter %.o,$^) -o $@

$(FRAMES_B)/%-aarch64/resumers: test/platform/resumers.c test/support/resumers.h coroutine.cpp coroutine.h asm_switch.S
	@mkdir -p $(@D)
	$(FRAMES_CXX_aarch64) $(DEFS_$*) $(LIBFLAGS) $(WARN) -O2 -g -c coroutine.cpp -o $(@D)/coroutine.o
	$(if $(filter asm,$*),$(FRAMES_CC_aarch64) -g -c asm_switch.S -o $(@D)/asm_switch.o)
	$(FRAMES_CC_aarch64) -I. -Itest/support $(WARN) -O2 -g $< $(@D)/coroutine.o $(if $(filter asm,$*),$(@D)/asm_switch.o) -o $@

# ---- make frames-test ------------------------------------------------------------
# gdb's bt inside a coroutine goes on into each resumer (test/platform/frames_gdb.sh),
# both backends, natively and for aarch64 under qemu-user (where its tools are
# installed); perf's frame-pointer call graph of the game runs from the
# coroutines' work into the game loop and main (test/platform/perf_check.sh),
# both backends, natively: skipped with a line where perf cannot record.
FRAMES_BUILDS := $(foreach b,$(BACKENDS),$(foreach a,$(FRAMES_ARCHS),$(b)-$(a)))

.PHONY: frames-test profile-game flamegraph
frames-test: $(foreach f,$(FRAMES_BUILDS),$(FRAMES_B)/$(f)/resumers) $(foreach b,$(BACKENDS),$(PROFILE_B)/$(b)/game)
	@for f in $(FRAMES_BUILDS); do \
		case $$f in *-aarch64) run='$(FRAMES_RUN_aarch64)' ;; *) run= ;; esac; \
		env $$run test/platform/frames_gdb.sh $(FRAMES_B)/$$f/resumers $(FRAMES_B)/$$f/gdb || exit 1; done
	@for b in $(BACKENDS); do test/platform/perf_check.sh $(PROFILE_B)/$$b/game $(PROFILE_B)/$$b/check || exit 1; done
	@$(if $(filter aarch64,$(FRAMES_ARCHS)),:,echo "frames-test: no aarch64 (needs qemu-user gdb-multiarch g++-aarch64-linux-gnu)")

# ---- make profile-game, make flamegraph ------------------------------------------
# profile-game: perf's report of the game (BACKEND's), callers first, with
# PROFILE_CALL_GRAPH as perf record's --call-graph (fp, the frame pointers,
# which run on into the game loop; dwarf, from a copy of the stack, which
# names frames without frame pointers but stops at each coroutine's start).
# flamegraph: the same profile (fp) as a flame graph drawn by speedscope
# (npm's, SPEEDSCOPE_VERSION, installed into $(B)/speedscope on first use) in
# headless Chromium: $(PROFILE_B)/$(BACKEND)/flamegraph.png.
PROFILE_CALL_GRAPH ?= fp
PROFILE_GAMES      ?= 2000
SPEEDSCOPE_VERSION ?= 1.25.0
SPEEDSCOPE := $(B)/speedscope/node_modules/speedscope/dist/release/index.html
CHROMIUM   ?= chromium

$(PROFILE_B)/$(BACKEND)/perf-$(PROFILE_CALL_GRAPH).data: $(PROFILE_B)/$(BACKEND)/game
	perf record -e cpu-clock -F 4000 --call-graph $(PROFILE_CALL_GRAPH) -o $@ -- $< $(PROFILE_GAMES)

profile-game: $(PROFILE_B)/$(BACKEND)/perf-$(PROFILE_CALL_GRAPH).data
	perf report -i $< --stdio --children --percent-limit 5 -g caller,0.5,callee,function,percent

$(SPEEDSCOPE):
	npm install --no-audit --no-fund --prefix $(B)/speedscope speedscope@$(SPEEDSCOPE_VERSION)

flamegraph: $(PROFILE_B)/$(BACKEND)/perf-fp.data $(SPEEDSCOPE)
	bench/flamegraph.sh $< "examples/game, $(BACKEND) backend" $(SPEEDSCOPE) $(PROFILE_B)/$(BACKEND)/flamegraph.png
