# mk/bench.mk - benchmarks: times (bench) and instructions (bench-ir).

# ---- Benchmarks ----------------------------------------------------------------
# `make bench`: timings of both backends beside their floors (Boost.Context's
# fcontext for a switch, two memcpy(N) for a copy): times as medians of
# interleaved repeats, ratios as medians of per-repeat ratios (see
# bench/bench.cpp), in build/bench.csv and, with gnuplot, build/bench.png; and
# what a coroutine_clone and a coroutine_delete cost beside what they save (a
# new coroutine run to the same yield, a fork(), a replay; a resume to the
# end).  `make bench-ir`: instructions per operation, counted by callgrind.  Built with -O2 whatever
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

# $@: the objects $^ linked into one, every symbol it defines renamed
# $(1)_..., in an archive; the work files go in folder $(2).
define renamed-archive
	$(CC) -r -nostdlib $^ -o $(2)/both.o
	$(NM) -g --defined-only $(2)/both.o | awk '{ print $$3, "$(1)_" $$3 }' > $(2)/names
	$(OBJCOPY) --redefine-syms=$(2)/names $(2)/both.o $(2)/renamed.o
	rm -f $@
	$(AR) rcs $@ $(2)/renamed.o
endef

$(O)/libcoroutine-alt.a: $(O)/coroutine.o $(O)/bench-alt/asm_switch.o
	$(call renamed-archive,alt,$(O)/bench-alt)

# And a checked copy (COROUTINE_CHECKED=1: see docs/checking.md),
# every symbol renamed checked_..., so that a checked round trip is timed
# beside the plain one.  Not in a checked build itself, nor without objcopy.
BENCH_CHECKED := $(if $(shell command -v $(OBJCOPY)),$(if $(DEFS_CHECKED),,$(O)/libcoroutine-checked.a))
$(O)/bench-checked/coroutine.o: coroutine.cpp coroutine.h coroutine_checked.h
	@mkdir -p $(@D)
	$(CXX) $(CPPFLAGS) $(DEFS_$(BACKEND)) -DCOROUTINE_CHECKED=1 $(LIBFLAGS) $(WARN) $(CXXFLAGS) -c $< -o $@

$(O)/libcoroutine-checked.a: $(O)/bench-checked/coroutine.o $(filter %/asm_switch.o,$(LIBOBJS_$(BACKEND)))
	$(call renamed-archive,checked,$(O)/bench-checked)

$(O)/bench: bench/bench.cpp bench/bench.h coroutine.h $(O)/libcoroutine.a $(BENCH_ALT_$(BACKEND)) $(BENCH_CHECKED)
	$(CXX) $(CPPFLAGS) -I. -DBENCH_BACKEND='"$(BACKEND)"' -DBENCH_HAVE_FCONTEXT=$(BENCH_FCONTEXT) \
		-DBENCH_HAVE_ALT=$(if $(BENCH_ALT_$(BACKEND)),1,0) -DBENCH_HAVE_CHECKED=$(if $(BENCH_CHECKED),1,0) -std=c++11 \
		$(WARN) $(CXXFLAGS) -O2 $(LDFLAGS) $< $(O)/libcoroutine.a $(BENCH_ALT_$(BACKEND)) $(BENCH_CHECKED) \
		$(if $(filter 1,$(BENCH_FCONTEXT)),-lboost_context) -o $@

# The library beside libaco (bench/peer.c): `make bench LIBACO=DIR` builds
# libaco's aco.c and acosw.S from the checkout in DIR, as its README builds
# them (-O2, its default configuration, which keeps the FP control words
# per coroutine, as this library does), into the peer bench.  Nothing of
# libaco is in this repository; without LIBACO the peer bench runs this
# library's rows alone.  Built twice, for the backend PEER_BACKEND: as a C
# program (peer) and as a C++ one that uses the C++ runtime (peer-cxx).
LIBACO       ?=
PEER_BACKEND ?= asm
PEER_ACO      = $(if $(LIBACO),$(O)/libaco/aco.o $(O)/libaco/acosw.o)
PEER_FLAGS    = -I. $(if $(LIBACO),-I$(LIBACO) -DBENCH_HAVE_ACO=1) -DBENCH_BACKEND='"$(BACKEND)"' \
	$(WARN) $(CFLAGS) -O2 $(LDFLAGS)
# A change of LIBACO rebuilds the peer programs.
$(shell mkdir -p $(B); echo '$(LIBACO)' | cmp -s - $(B)/peer-libaco || echo '$(LIBACO)' > $(B)/peer-libaco)

$(O)/libaco/%.o: $(LIBACO)/%.c $(B)/peer-libaco
	@mkdir -p $(@D)
	$(CC) -O2 -g -I$(LIBACO) -c $< -o $@

$(O)/libaco/%.o: $(LIBACO)/%.S $(B)/peer-libaco
	@mkdir -p $(@D)
	$(CC) -O2 -g -Wa,--noexecstack -c $< -o $@

$(O)/peer: bench/peer.c bench/bench.h coroutine.h $(O)/libcoroutine.a $(PEER_ACO) $(B)/peer-libaco
	$(CC) $(PEER_FLAGS) $< $(O)/libcoroutine.a $(PEER_ACO) -lm -o $@

$(O)/peer-cxx: bench/peer.c bench/bench.h coroutine.h $(O)/libcoroutine.a $(PEER_ACO) $(B)/peer-libaco
	$(CXX) -x c++ $(PEER_FLAGS) $< -x none $(O)/libcoroutine.a $(PEER_ACO) -lm -o $@

PEER_PROGRAMS = $(B)/$(PEER_BACKEND)/peer $(B)/$(PEER_BACKEND)/peer-cxx

# `make test` runs every row of both benches once, a few operations each
# (bench check), for what the rows check as they run: a clone holds its
# origin's slice, a delete destroys each object on the frames once, every
# coroutine ends.  No figure is judged.  Where the bench cannot be built
# (it reads glibc's mallinfo2), a line says so.
BENCH_MALLINFO_TEST = printf '\#include <malloc.h>\nint main() { return (int)mallinfo2().uordblks; }\n' \
	| $(CXX) -x c++ - -o /dev/null 2>/dev/null

.PHONY: bench-check
bench-check:
	@if ! $(BENCH_MALLINFO_TEST); then echo "bench-check: $(CXX)'s C library has no mallinfo2: no bench here"; exit 0; fi; \
	for b in $(BACKENDS); do $(MAKE) $(QUIET) BACKEND=$$b $(B)/$$b/bench || exit 1; \
		LOG_DIR=$(B) V='$(V)' test/support/run.sh --command "bench check ($$b)" $(B)/$$b/bench check || exit 1; done

.PHONY: bench bench-ir bench-programs
bench-programs:
	@for b in $(BACKENDS); do $(MAKE) --no-print-directory BACKEND=$$b $(B)/$$b/bench || exit 1; done
	@$(MAKE) --no-print-directory BACKEND=$(PEER_BACKEND) $(PEER_PROGRAMS)

bench: bench-programs
	echo "backend,variant,n,unit,median,min,max,floor,floor_median,ratio,ratio_q1,ratio_q3" > $(B)/bench.csv
	@for b in $(BACKENDS); do $(B)/$$b/bench $(B)/bench.csv || exit 1; done
	@for p in $(PEER_PROGRAMS); do $$p $(B)/bench.csv || exit 1; done
	@if command -v gnuplot >/dev/null; then gnuplot bench/plot.gp && echo "wrote $(B)/bench.csv, $(B)/bench.png"; \
	else echo "wrote $(B)/bench.csv; no gnuplot, no $(B)/bench.png"; fi

bench-ir: bench-programs
	bench/bench-ir.sh $(foreach b,$(BACKENDS),$(B)/$(b)/bench) $(PEER_PROGRAMS)

