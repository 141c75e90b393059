# mk/lua.mk - the Lua 5.4 host (examples/lua_host.c): its build, its tests
# (test/lua/) and its benchmark (bench/bench_lua.c).  Included by the Makefile.
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

$(O)/examples/lua_host.o: examples/lua_host.c coroutine.h
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(LUA_CFLAGS) -I. $(WARN) $(CFLAGS) -c $< -o $@

# A C program, linked with the C driver like the other C examples.
$(O)/examples/lua_host$(EXE): $(O)/examples/lua_host.o $(O)/libcoroutine.a
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
# status must then be 1, otherwise 0.  Each program runs under $(RUN).
LUA_CASES := $(sort $(basename $(notdir $(wildcard test/lua/*.expected))))
LUA_ARGS_order  := test/lua/order-b.lua test/lua/order-a.lua test/lua/order-c.lua
LUA_ARGS_shared := test/lua/shared-a.lua test/lua/shared-b.lua
LUA_ARGS_errors := test/lua/errors-ok.lua test/lua/errors-fail.lua test/lua/missing.lua \
	test/lua/errors-syntax.lua test/lua/errors-object.lua
LUA_ARGS_load_fails := test/lua/errors-ok.lua test/lua/missing.lua test/lua/errors-syntax.lua
LUA_ARGS_error_objects := $(addprefix test/lua/error_objects-,tostring.lua not_string.lua \
	number.lua nil.lua waits.lua)
LUA_ARGS_registry := test/lua/registry-a.lua test/lua/registry-b.lua test/lua/registry-c.lua
# Out of memory: oom_host is lua_host whose allocations fail on demand.
OOM_HOST = $(O)/lua/oom_host$(EXE)
LUA_HOST_oom     := $(OOM_HOST)
LUA_ARGS_oom     := test/lua/oom-a.lua test/lua/oom-b.lua test/lua/oom-c.lua
LUA_HOST_oom_new := $(OOM_HOST)
LUA_ARGS_oom_new := --refuse-new=2 test/lua/errors-ok.lua test/lua/ticks.lua
# 5,000 copies of one script, listed by the shell.
LUA_SCALE := 5000
LUA_ARGS_scale  := $$(yes test/lua/scale.lua | head -n $(LUA_SCALE))

define lua-case
	@echo "== lua_host $(1)"
	@$(RUN) $(or $(LUA_HOST_$(1)),$(O)/examples/lua_host) $(or $(LUA_ARGS_$(1)),test/lua/$(1).lua) \
		> $(O)/lua/$(1).out 2> $(O)/lua/$(1).err; \
		test $$? = $(if $(wildcard test/lua/$(1).stderr),1,0) || { echo "lua_host $(1): wrong exit status"; exit 1; }
	@diff -u test/lua/$(1).expected $(O)/lua/$(1).out
	@diff -u $(or $(wildcard test/lua/$(1).stderr),/dev/null) $(O)/lua/$(1).err

endef

# test/lua/oom_host.c includes the host; the library's calls to malloc,
# calloc and realloc, the host's too, go to its wrappers.
$(OOM_HOST): test/lua/oom_host.c examples/lua_host.c coroutine.h $(O)/libcoroutine.a
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(LUA_CFLAGS) -I. $(WARN) $(CFLAGS) -c $< -o $@.o
	$(CLINK) $(LDFLAGS) $@.o $(O)/libcoroutine.a $(LUA_LIBS) -o $@ \
		-Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=luaL_openlibs,--wrap=coroutine_new

# The cases against one build ($(O)).
.PHONY: lua-check lua-test lua-sanitize lua-valgrind
INTERNAL_TARGETS += lua-example lua-check lua-sanitize lua-valgrind
lua-check: $(O)/examples/lua_host$(EXE) $(OOM_HOST)
	@mkdir -p $(O)/lua
	$(foreach c,$(LUA_CASES),$(call lua-case,$(c)))

# Both backends.  Unlike the others, this target fails where Lua is missing.
lua-test:
	@$(LUA_FOUND) || { $(call LUA_MISSING,lua-test); exit 1; }
	@for b in $(BACKENDS); do $(MAKE) --no-print-directory BACKEND=$$b lua-check || exit 1; done

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
$(O)/bench_lua: bench/bench_lua.c bench/bench.h examples/lua_host.c coroutine.h $(O)/libcoroutine.a
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
