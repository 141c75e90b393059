# mk/lua.mk - the Lua 5.4 host (examples/lua_host.c, and the part a host
# embeds, examples/lua_scripts.c): its build, its tests (test/lua/, and
# docs/lua.md's program) and its benchmark (bench/bench_lua.c).  Included by
# the Makefile.
#
# Lua is found through pkg-config (Debian: liblua5.4-dev and pkg-config), and
# used only when the selected compiler can link a program with it: a cross,
# Windows or WebAssembly build finds the build machine's Lua, and skips.
LUA_PC     ?= lua5.4
LUA_CFLAGS  = $(shell pkg-config --cflags $(LUA_PC) 2>/dev/null)
LUA_LIBS    = $(shell pkg-config --libs $(LUA_PC) 2>/dev/null)
LUA_FOUND   = pkg-config --exists $(LUA_PC) 2>/dev/null && \
	printf '\#include <lua.h>\nint main(void) { return lua_gettop(0); }\n' \
	| $(CC) $(LUA_CFLAGS) -x c - $(LUA_LIBS) -o /dev/null 2>/dev/null
LUA_MISSING = echo "$(1): skipped, $(CC) links no Lua 5.4 found by pkg-config $(LUA_PC) (Debian: liblua5.4-dev pkg-config)"

# ---- The host ----------------------------------------------------------------

LUA_SCRIPTS = $(O)/examples/lua_scripts.o

$(O)/examples/lua_host.o $(LUA_SCRIPTS): $(O)/examples/%.o: examples/%.c examples/lua_scripts.h coroutine.h
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(LUA_CFLAGS) -I. $(WARN) $(CFLAGS) -c $< -o $@

# A C program, linked with the C driver like the other C examples.
$(O)/examples/lua_host$(EXE): $(O)/examples/lua_host.o $(LUA_SCRIPTS) $(O)/libcoroutine.a
	$(CLINK) $(LDFLAGS) $^ $(LUA_LIBS) -o $@

# `make examples` builds it too, where Lua is there.
.PHONY: lua-example
examples: lua-example
lua-example:
	@if $(LUA_FOUND); then $(MAKE) --no-print-directory $(O)/examples/lua_host$(EXE); \
	else $(call LUA_MISSING,lua_host); fi

# ---- Its tests ---------------------------------------------------------------
# Each case is test/lua/CASE.expected, what lua_host (or LUA_HOST_CASE) prints
# on stdout when run on test/lua/CASE.lua (or on LUA_ARGS_CASE), with
# test/lua/CASE.stderr, when there is one, what it prints on stderr; the exit
# status must then be 1, otherwise 0.  Each misuse of the API the host embeds
# is test/lua/CASE.abort, the line embed_host prints before it aborts when
# run with --misuse=KIND (CASE is misuse_KIND) or on LUA_ARGS_CASE.  Each
# program runs under $(RUN).
LUA_CASES        := $(sort $(basename $(notdir $(wildcard test/lua/*.expected))))
LUA_MISUSE_CASES := $(sort $(basename $(notdir $(wildcard test/lua/*.abort))))
LUA_ARGS_order  := test/lua/order-b.lua test/lua/order-a.lua test/lua/order-c.lua
LUA_ARGS_shared := test/lua/shared-a.lua test/lua/shared-b.lua
LUA_ARGS_errors := test/lua/errors-ok.lua test/lua/errors-fail.lua test/lua/missing.lua \
	test/lua/errors-syntax.lua test/lua/errors-object.lua
LUA_ARGS_load_fails := test/lua/errors-ok.lua test/lua/missing.lua test/lua/errors-syntax.lua
LUA_ARGS_error_objects := $(addprefix test/lua/error_objects-,tostring.lua not_string.lua \
	number.lua nil.lua waits.lua)
LUA_ARGS_registry := test/lua/registry-a.lua test/lua/registry-b.lua test/lua/registry-c.lua
LUA_ARGS_collected := test/lua/collected-a.lua test/lua/collected-b.lua
# Out of memory: oom_host is lua_host whose allocations fail on demand.
OOM_HOST = $(O)/lua/oom_host$(EXE)
LUA_HOST_oom     := $(OOM_HOST)
LUA_ARGS_oom     := test/lua/oom-a.lua test/lua/oom-b.lua test/lua/oom-c.lua
LUA_HOST_oom_new := $(OOM_HOST)
LUA_ARGS_oom_new := --refuse-new=2 test/lua/errors-ok.lua test/lua/ticks.lua
# embed_host embeds lua_scripts.h as a host that draws frames does.
EMBED_HOST = $(O)/lua/embed_host$(EXE)
LUA_HOST_embed := $(EMBED_HOST)
LUA_ARGS_embed := test/lua/embed-spawner.lua
LUA_HOST_closed := $(EMBED_HOST)
LUA_ARGS_closed := --frames=1 test/lua/closed.lua test/lua/closed-stubborn.lua
LUA_ARGS_misuse_tick := test/lua/misuse_tick.lua
# 5,000 copies of one script, listed by the shell.
LUA_SCALE := 5000
LUA_ARGS_scale  := $$(yes test/lua/scale.lua | head -n $(LUA_SCALE))

# A case's line, as test/support/run.sh counts it: "ok   CASE", or
# "FAIL CASE: why" and what differs (and $(O)/lua/failed made, so that
# lua-cases fails at its end, once every case has run).
lua-run = $(RUN) $(2) $(or $(LUA_ARGS_$(1)),$(3)) > $(O)/lua/$(1).out 2> $(O)/lua/$(1).err; status=$$?; why=
lua-verdict = if [ -z "$$why" ]; then echo "ok   test/lua/$(1)"; \
	else echo "FAIL test/lua/$(1): $${why\#, }"; cat $(2); touch $(O)/lua/failed; fi

define lua-case
	@$(call lua-run,$(1),$(or $(LUA_HOST_$(1)),$(O)/examples/lua_host),test/lua/$(1).lua); \
	[ $$status = $(if $(wildcard test/lua/$(1).stderr),1,0) ] || why="exit status $$status"; \
	diff -u test/lua/$(1).expected $(O)/lua/$(1).out > $(O)/lua/$(1).diff || why="$$why, stdout differs"; \
	diff -u $(or $(wildcard test/lua/$(1).stderr),/dev/null) $(O)/lua/$(1).err >> $(O)/lua/$(1).diff \
		|| why="$$why, stderr differs"; \
	$(call lua-verdict,$(1),$(O)/lua/$(1).diff)

endef

define lua-misuse-case
	@$(call lua-run,$(1),$(EMBED_HOST),--misuse=$(1:misuse_%=%)); \
	[ $$status = 134 ] || why="exit status $$status, not abort's 134"; \
	grep -qxF -- "$$(cat test/lua/$(1).abort)" $(O)/lua/$(1).err || why="$$why, no line: $$(cat test/lua/$(1).abort)"; \
	$(call lua-verdict,$(1),$(O)/lua/$(1).err)

endef

# test/lua/oom_host.c includes the host; the library's calls to malloc,
# calloc and realloc, the host's too, go to its wrappers.
$(OOM_HOST): test/lua/oom_host.c examples/lua_host.c examples/lua_scripts.h coroutine.h $(LUA_SCRIPTS) \
		$(O)/libcoroutine.a
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(LUA_CFLAGS) -I. $(WARN) $(CFLAGS) -c $< -o $@.o
	$(CLINK) $(LDFLAGS) $@.o $(LUA_SCRIPTS) $(O)/libcoroutine.a $(LUA_LIBS) -o $@ \
		-Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=luaL_openlibs,--wrap=coroutine_new

$(EMBED_HOST): test/lua/embed_host.c examples/lua_scripts.h $(LUA_SCRIPTS) $(O)/libcoroutine.a
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(LUA_CFLAGS) $(WARN) $(CFLAGS) -c $< -o $@.o
	$(CLINK) $(LDFLAGS) $@.o $(LUA_SCRIPTS) $(O)/libcoroutine.a $(LUA_LIBS) -o $@

# The cases against one build ($(O)): a line for them all, counted by
# test/support/run.sh, which prints the log of the cases when one fails.
.PHONY: lua-check lua-cases lua-docs-check lua-test lua-sanitize lua-valgrind
INTERNAL_TARGETS += lua-example lua-check lua-cases lua-docs-check lua-sanitize lua-valgrind
lua-check: $(O)/examples/lua_host$(EXE) $(OOM_HOST) $(EMBED_HOST)
	@mkdir -p $(O)/lua
	@LOG_DIR=$(O)/lua V='$(V)' test/support/run.sh --command "the Lua cases, $(BACKEND) backend" \
		$(MAKE) --no-print-directory -s lua-cases

lua-cases:
	@rm -f $(O)/lua/failed
	$(foreach c,$(LUA_CASES),$(call lua-case,$(c)))
	$(foreach c,$(LUA_MISUSE_CASES),$(call lua-misuse-case,$(c)))
	@[ ! -e $(O)/lua/failed ]

# docs/lua.md's program, built by its own lines beside the library's files
# and lua_scripts.[ch], prints what docs/lua.md shows.
lua-docs-check:
	@LOG_DIR=$(B) V='$(V)' test/support/run.sh --command "docs/lua.md's program" \
		test/lua/docs_program.sh $(B)/lua-docs frames.c

# Both backends and docs/lua.md's program; the last line counts the cases
# of all.  Unlike the others, this target fails where Lua is missing.
lua-test:
	@$(LUA_FOUND) || { $(call LUA_MISSING,lua-test); exit 1; }
	@export TEST_TALLY=$(abspath $(B))/lua.tally; mkdir -p $(B); : > $$TEST_TALLY; ok=1; \
	for b in $(BACKENDS); do $(MAKE) $(QUIET) BACKEND=$$b lua-check || ok=; done; \
	$(MAKE) $(QUIET) lua-docs-check || ok=; \
	test/support/run.sh total && [ -n "$$ok" ]

# make sanitize and make valgrind run the cases too, both backends, with the
# same tools and options as the suite (SANITIZE_VARS, VALGRIND: mk/tools.mk).
sanitize: lua-sanitize
valgrind: lua-valgrind

lua-sanitize:
	@if $(LUA_FOUND); then for b in $(BACKENDS); do \
		$(MAKE) --no-print-directory BACKEND=$$b $(SANITIZE_VARS) lua-check || exit 1; done; \
	else $(call LUA_MISSING,lua-sanitize); fi

lua-valgrind:
	@if $(LUA_FOUND); then for b in $(BACKENDS); do \
		$(MAKE) --no-print-directory BACKEND=$$b RUN="$(VALGRIND)" lua-check || exit 1; done; \
	else $(call LUA_MISSING,lua-valgrind); fi

# ---- Its benchmark -------------------------------------------------------------
# bench-lua: bytes per waiting script and the wait() round trip, next to Lua's
# own coroutines (see bench/bench_lua.c), both backends; bench-lua-ir: the
# round trips in instructions, counted by callgrind.  make bench and make
# bench-ir run them too, where Lua is there.  Built with -O2 whatever CFLAGS say.
$(O)/bench_lua: bench/bench_lua.c bench/bench.h examples/lua_scripts.c examples/lua_scripts.h coroutine.h \
		$(O)/libcoroutine.a
	$(CC) $(CPPFLAGS) $(LUA_CFLAGS) -I. -DBENCH_BACKEND='"$(BACKEND)"' $(WARN) $(CFLAGS) -O2 -c $< -o $@.o
	$(CLINK) $(LDFLAGS) $@.o $(O)/libcoroutine.a $(LUA_LIBS) -o $@

.PHONY: bench-lua bench-lua-ir
bench: bench-lua
bench-ir: bench-lua-ir

bench-lua:
	@if $(LUA_FOUND); then for b in $(BACKENDS); do \
		$(MAKE) --no-print-directory BACKEND=$$b $(B)/$$b/bench_lua && $(B)/$$b/bench_lua || exit 1; done; \
	else $(call LUA_MISSING,bench-lua); fi

bench-lua-ir:
	@if $(LUA_FOUND); then for b in $(BACKENDS); do \
		$(MAKE) --no-print-directory BACKEND=$$b $(B)/$$b/bench_lua || exit 1; done; \
		bench/bench-lua-ir.sh $(foreach b,$(BACKENDS),$(B)/$(b)/bench_lua); \
	else $(call LUA_MISSING,bench-lua-ir); fi
