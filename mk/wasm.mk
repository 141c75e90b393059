# mk/wasm.mk - WebAssembly (Emscripten) under node.

# ---- WebAssembly (Emscripten) under node ------------------------------------------
# Needs emscripten and nodejs.  coroutine.cpp picks Emscripten's fibers by
# itself; programs link with -sASYNCIFY (docs/platforms.md).  CMocka is not packaged
# for wasm (and its tests fork): what runs is test/platform/driver.c and
# coroutine_clone's tests without CMocka (clone: no C++, whose exceptions
# Emscripten leaves off), the demo's and examples' outputs (despawn's
# without the deleted entity's destructors: NO_UNWIND, see test.mk), then
# test/platform/wasm_faults.c, then the wasm lines of docs/platforms.md on README's first
# program, word for word (they set NODE_PATH themselves: not here).
# -sNODERAWFS lets the script example read its files from the host.
# Debian's emcc (3.1.6) finds node's acorn through
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
# $(call wasm-make,OPT): make again with emcc and em++, which find node's
# acorn through NODE_PATH, for a build at OPT in $(B)/wasm<OPT>.
wasm-make = NODE_PATH=$${NODE_PATH:-/usr/share/nodejs} $(MAKE) --no-print-directory \
	B=$(B)/wasm$(1) BACKEND=fiber EXE=.js CC=$(EMCC) CXX=$(EMXX) AR=$(EMAR) \
	CFLAGS="$(1)" CXXFLAGS="$(1)" LDFLAGS="$(1) $(WASM_LDFLAGS) -sNODERAWFS=1" RUN="$(WASM_RUN)" NO_UNWIND=1
WASM_MAKE = $(call wasm-make,$(WASM_OPT))
# The driver again at -Os: there a coroutine can keep all its frames in
# wasm locals, and its yield then saves no byte of the C stack (at -O2 a
# bare yield saves 16).  The driver alone, to keep wasm-test short.
WASM_OPT_SMALL := -Os

.PHONY: wasm-test
wasm-test:
	+@$(WASM_MAKE) TESTS="driver clone" check check-outputs
	@echo "== script nesting too deep (examples/deep.txt)"
	@$(WASM_RUN) $(WASM_B)/fiber/examples/script.js examples/deep.txt examples/scripts/hello.txt \
		> $(WASM_B)/script-deep.out 2> $(WASM_B)/script-deep.err; test $$? = 1
	@cmp examples/script-deep.expected $(WASM_B)/script-deep.out
	@cmp examples/script-deep.stderr $(WASM_B)/script-deep.err
	+@$(WASM_MAKE) B=$(WASM_B)/faults CPPFLAGS="$(CPPFLAGS) -DCOROUTINE_ASYNCIFY_SIZE=4096" $(WASM_B)/faults/fiber/wasm_faults.js
	@echo "== test/platform/wasm_faults.sh"
	@test/platform/wasm_faults.sh "$(WASM_RUN)" $(WASM_B)/faults/fiber/wasm_faults.js
	+@$(call wasm-make,$(WASM_OPT_SMALL)) TESTS="driver clone" check
	@env -u NODE_PATH LOG_DIR=$(B) V='$(V)' test/support/run.sh --command "the wasm lines (docs/platforms.md)" \
		test/docs/first_program.sh $(WASM_B)/readme wasm-build

# The wasm twin of bench: the fiber backend beside Emscripten's own fiber
# round trip, under node, built with WASM_OPT (-O2 unless given).
.PHONY: bench-wasm
bench-wasm:
	+@$(WASM_MAKE) $(WASM_B)/fiber/bench_wasm.js
	$(WASM_RUN) $(WASM_B)/fiber/bench_wasm.js

$(O)/bench_wasm.js: bench/bench_wasm.c coroutine.h $(O)/libcoroutine.a
	$(CC) -I. $(WARN) $(CFLAGS) $(LDFLAGS) $< $(O)/libcoroutine.a -o $@

# clone makes the library's mallocs fail on demand there (see test_clone.c).
%/fiber/clone.o: override CPPFLAGS += -DWRAPPED_MALLOC
%/fiber/clone.js: override LDFLAGS += -Wl,--wrap=malloc,--wrap=free

# What stops a wasm program: built with a 4 KiB asyncify area, and with
# Emscripten's check of the stack pointer in every function.
$(O)/wasm_faults.js: $(O)/wasm_faults.o $(O)/libcoroutine.a
	$(CLINK) $(LDFLAGS) -sSTACK_OVERFLOW_CHECK=2 $^ -o $@

