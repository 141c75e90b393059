# mk/test.mk - the suite's programs, and the checks that need no CMocka.
#
# test/spec/ is the specification: the CMocka suites, a behaviour per test.
# test/support/ holds what they share (support.h, the reference model, the
# frames of test_guard, the plugins of test_late_runtime and test_reload);
# test/platform/ the programs for targets without CMocka (driver.c) or for
# one platform (win_stack.c, msvc_exceptions.cpp, wasm_faults.c).

TESTLIBS := -lcmocka -lpthread -lm
TEST_HEADERS := coroutine.h $(wildcard test/support/*.h)
TEST_INCLUDES := -I. -Itest/support

# The tests see the backend's macro (and the checked build's): where the backends differ by design
# (test_fpu), a test checks each one's promise.  C++ tests (exceptions) are
# C++17 programs (std::uncaught_exceptions), linked with the C++ driver.
TEST_CC = $(CC) $(CPPFLAGS) $(DEFS_$(BACKEND)) $(DEFS_CHECKED) $(WARN) $(CFLAGS) $(TEST_INCLUDES)
TEST_CXX = $(CXX) -std=c++17 $(CPPFLAGS) $(DEFS_$(BACKEND)) $(DEFS_CHECKED) $(WARN) $(CXXFLAGS) $(TEST_INCLUDES)
define test-rules
$(O)/%.o: $(1)/%.c $(TEST_HEADERS)
	@mkdir -p $$(@D)
	$$(TEST_CC) -c $$< -o $$@

$(O)/%.o: $(1)/%.cpp $(TEST_HEADERS)
	@mkdir -p $$(@D)
	$$(TEST_CXX) -c $$< -o $$@

endef
$(foreach d,test/spec test/support test/platform,$(eval $(call test-rules,$(d))))

# test_exceptions makes the library's realloc fail on demand (glibc only).
WRAP_REALLOC = $(if $(filter %-gnu %-gnueabihf,$(shell $(CXX) -dumpmachine)),-Wl$(,)--wrap=realloc)
, := ,
$(O)/test_exceptions: $(O)/test_exceptions.o $(O)/libcoroutine.a
	$(CXX) $(LDFLAGS) $^ $(TESTLIBS) $(WRAP_REALLOC) -o $@

# driver_cxx: the same C++ tests without CMocka (test/support/plain_suite.h),
# for targets that have none; one source, so that the two cannot drift apart.
$(O)/driver_cxx.o: test/spec/test_exceptions.cpp $(TEST_HEADERS)
	@mkdir -p $(@D)
	$(TEST_CXX) -DTEST_PLAIN -c $< -o $@

$(O)/driver_cxx$(EXE): $(O)/driver_cxx.o $(O)/libcoroutine.a
	$(CXX) $(LDFLAGS) $^ -o $@

# test_delete's C frames have cleanups for coroutine_delete's unwinding to
# run (-fexceptions), which links the unwinder in; test_delete_cxx is C++.
# delete and delete_cxx: the same without CMocka (TEST_PLAIN), for targets
# that have none.  (On TEST_CC, not CFLAGS, which the tool targets set on
# make's command line, where it would override this.)
$(O)/test_delete.o $(O)/delete.o: TEST_CC += -fexceptions

$(O)/delete.o: test/spec/test_delete.c $(TEST_HEADERS)
	@mkdir -p $(@D)
	$(TEST_CC) -DTEST_PLAIN -c $< -o $@

$(O)/delete_cxx.o: test/spec/test_delete_cxx.cpp $(TEST_HEADERS)
	@mkdir -p $(@D)
	$(TEST_CXX) -DTEST_PLAIN -c $< -o $@

# test_delete_no_exceptions: C++ built without exceptions (its frames have
# unwind tables and nothing for the unwinder to run), linked with the C++
# driver, and so with an unwinder.  test_delete_no_unwinder is C without
# -fexceptions, linked with the C driver: no unwinder (the generic rule).
$(O)/test_delete_no_exceptions.o: TEST_CXX += -fno-exceptions

$(O)/test_delete_cxx $(O)/test_delete_no_exceptions: $(O)/%: $(O)/%.o $(O)/libcoroutine.a
	$(CXX) $(LDFLAGS) $^ $(TESTLIBS) -o $@

# DELETE_SUPPORT: what the C one needs besides, for a C library that lacks
# something the unwinder asks for (musl-test).
$(O)/delete$(EXE): $(O)/delete.o $(O)/libcoroutine.a $(DELETE_SUPPORT)
	$(CLINK) $(LDFLAGS) -fexceptions $^ $(if $(EXE),,-lpthread) -o $@

$(O)/delete_cxx$(EXE): $(O)/delete_cxx.o $(O)/libcoroutine.a
	$(CXX) $(LDFLAGS) $^ $(if $(EXE),,-lpthread) -o $@

# coroutine_clone's tests: test_clone (C) and test_clone_exceptions (C++,
# linked with the C++ driver); and the same without CMocka (clone,
# clone_cxx) for targets that have none.
$(O)/test_clone_exceptions: $(O)/test_clone_exceptions.o $(O)/libcoroutine.a
	$(CXX) $(LDFLAGS) $^ $(TESTLIBS) -o $@

$(O)/clone.o: test/spec/test_clone.c $(TEST_HEADERS)
	@mkdir -p $(@D)
	$(TEST_CC) -DTEST_PLAIN -c $< -o $@

$(O)/clone$(EXE): $(O)/clone.o $(O)/libcoroutine.a
	$(CLINK) $(LDFLAGS) $^ -lm $(if $(EXE),,-lpthread) -o $@

$(O)/clone_cxx.o: test/spec/test_clone_exceptions.cpp $(TEST_HEADERS)
	@mkdir -p $(@D)
	$(TEST_CXX) -DTEST_PLAIN -c $< -o $@

$(O)/clone_cxx$(EXE): $(O)/clone_cxx.o $(O)/libcoroutine.a
	$(CXX) $(LDFLAGS) $^ -o $@

# test_late_runtime is a C program that loads a C++ library, and with it the
# C++ runtime, once it runs: the library calls the program's coroutine_*
# functions, which the program exports (-rdynamic).
$(O)/late_runtime_plugin.so: test/support/late_runtime_plugin.cpp test/support/late_runtime.h coroutine.h
	$(CXX) $(CPPFLAGS) $(WARN) $(CXXFLAGS) $(TEST_INCLUDES) -fPIC -shared $(LDFLAGS) $< -o $@

# And the same library built with clang++ against libc++ and libc++abi
# (libc++-dev), a second C++ runtime beside libstdc++: natively only, and
# where it does not build, one line says so and its tests skip.
LIBCXX_CXX ?= clang++ -stdlib=libc++
$(O)/late_runtime_plugin_libcxx.so: test/support/late_runtime_plugin.cpp test/support/late_runtime.h coroutine.h
	$(if $(shell command -v $(firstword $(LIBCXX_CXX))), \
		-$(LIBCXX_CXX) $(CPPFLAGS) $(WARN) -O2 -gdwarf-4 $(TEST_INCLUDES) -fPIC -shared $< -o $@, \
		@echo "$@: not built, no $(firstword $(LIBCXX_CXX)) (Debian: clang libc++-dev libc++abi-dev)")

# And a runtime that can be unloaded (Debian's are NODELETE), under the
# soname by which the library looks for libc++abi.
$(O)/unloadable_runtime.so: test/support/unloadable_runtime.c
	$(CC) $(CPPFLAGS) $(WARN) $(CFLAGS) -fPIC -shared -Wl,-soname,libc++abi.so.1 $(LDFLAGS) $< -o $@

$(O)/test_late_runtime: TESTLIBS += -rdynamic
$(O)/test_late_runtime: | $(O)/late_runtime_plugin.so $(O)/unloadable_runtime.so \
	$(if $(EMULATOR),,$(O)/late_runtime_plugin_libcxx.so)

# test_reload loads, drives and unloads again and again, as a game engine
# reloads its game code, a module with the library in it: reload_plugin.so
# (test/support/reload_plugin.c and the backend's position-independent
# objects); and between two reloads, any other module (reload_other.so).
# -Bsymbolic: the plugin's references to coroutine_* stay inside it, even
# where the program has the library too.
$(O)/pic/reload_plugin.o: test/support/reload_plugin.c test/support/reload.h coroutine.h
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(PIC) $(WARN) $(CFLAGS) $(TEST_INCLUDES) -c $< -o $@

$(O)/reload_plugin.so: $(O)/pic/reload_plugin.o $(PICOBJS_$(BACKEND))
	$(CC) -shared -Wl,-Bsymbolic $(LDFLAGS) $^ -o $@

# The same plugin under a second name, for reloads that overlap.
$(O)/reload_plugin_next.so: $(O)/reload_plugin.so
	cp $< $@

$(O)/reload_other.so: test/support/reload_other.c
	$(CC) $(WARN) $(CFLAGS) -fPIC -shared $(LDFLAGS) $< -o $@

$(O)/test_reload: | $(O)/reload_plugin.so $(O)/reload_plugin_next.so $(O)/reload_other.so

# Under qemu-user each load is translated anew (about 25 ms): 200 overlapping
# reloads there, the 1,000 of a native run cost 20 seconds a build.
$(O)/test_reload.o: CPPFLAGS += $(if $(EMULATOR),-DOVERLAPPING_RELOADS=200)

# test_guard's largest frames come from code built with -fstack-clash-protection.
$(O)/clash_frames.o: test/support/clash_frames.c test/support/clash_frames.h
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(WARN) $(CFLAGS) -fstack-clash-protection -c $< -o $@

$(O)/test_guard: $(O)/clash_frames.o

$(O)/test_model.o: test/support/model.c

$(O)/test_%: $(O)/test_%.o $(O)/libcoroutine.a
	$(CLINK) $(LDFLAGS) $^ $(TESTLIBS) -o $@

# The core checks without CMocka, for targets that have none (see driver.c).
$(O)/driver$(EXE): $(O)/driver.o $(O)/model.o $(O)/libcoroutine.a
	$(CLINK) $(LDFLAGS) $^ -lm $(if $(EXE),,-lpthread) -o $@

# test_child: child.h's runner itself, which needs neither CMocka nor the
# library, so that it runs wherever the programs that use it run.
$(O)/test_child$(EXE): $(O)/test_child.o
	$(CLINK) $(LDFLAGS) $^ -o $@

# test_alloc makes the library's allocations fail on demand (and has a
# cleanup for coroutine_delete's unwinding to run: -fexceptions).
$(O)/test_alloc.o: TEST_CC += -fexceptions
$(O)/test_alloc: TESTLIBS += -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=free,--wrap=malloc_usable_size,--wrap=mmap,--wrap=munmap

# test_examples runs the examples and the demo found beside it (under
# $EMULATOR when set), checking their output against examples/*.expected.
$(O)/test_examples: | $(addprefix $(O)/examples/,$(EXAMPLES)) $(O)/main

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

# A library that needs the C++ runtime (mangled names, exceptions,
# unwinding) would not link into a C program with the C driver, nor one
# that needs libatomic (which the C driver does not link).  The one
# exceptions are the weak references to __cxa_get_globals, with which
# coroutine.cpp swaps exception state, to _Unwind_ForcedUnwind, with which
# coroutine_delete unwinds, and to std::set_terminate, with which it ends a
# coroutine whose unwinding cannot go on (w: NULL when none is linked in);
# a runtime or an unwinder loaded later it finds through the C library
# (dlsym, dlopen, dl_iterate_phdr: no C++ symbols).
.PHONY: check-no-cxx-runtime check-shared
check-no-cxx-runtime: $(O)/libcoroutine.a
	@if $(NM) -u $< | grep -v -E '^ *w (__cxa_get_globals|_Unwind_ForcedUnwind|_ZSt13set_terminatePFvvE)$$' | awk '{ print $$NF }' \
		| grep -E '^(_Z|__cxa_|__gxx_personality|_Unwind_|__atomic_|__sync_)'; then \
		echo "$< needs the C++ runtime or libatomic for the symbols above"; exit 1; fi

# The shared library exports the functions of coroutine.h, nothing else,
# and needs no C++ runtime.
CHECK_SHARED := test/consumers/check-shared.sh

check-shared: $(O)/$(SHLIB)
	$(CHECK_SHARED) $<

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
	@cmp $(or $(OUTPUT_EXPECTED_$(call program-name,$(1))),examples/$(call program-name,$(1)).expected) $(1).out
	@cmp $(or $(wildcard examples/$(call program-name,$(1)).stderr),/dev/null) $(1).err

endef

# Where coroutine_delete unwinds nothing (NO_UNWIND=1: WebAssembly), the
# despawned entity's destructors do not run: despawn prints all but their
# lines, those between its "despawned" line and the next spawn's.
ifeq ($(NO_UNWIND),1)
OUTPUT_EXPECTED_despawn := $(O)/despawn-no-unwind.expected
endif
$(O)/despawn-no-unwind.expected: examples/despawn.expected
	@mkdir -p $(@D)
	sed '/ despawned at /,/ spawned at /{/ despawned at \| spawned at /!d}' $< > $@

.PHONY: check-outputs test-without-cmocka
check-outputs: $(addsuffix $(EXE),$(O)/main $(addprefix $(O)/examples/,$(EXAMPLES))) $(OUTPUT_EXPECTED_despawn)
	$(foreach p,$(filter-out %.expected,$^),$(call check-output,$(p)))

# What `test` checks, for a target without CMocka: driver.c, the C++
# exception tests and the delete and clone tests built without CMocka (driver_cxx,
# delete, delete_cxx, clone, clone_cxx), their child-case runner (test_child), and the outputs.
test-without-cmocka:
	@for b in $(BACKENDS); do $(MAKE) --no-print-directory BACKEND=$$b \
		TESTS="driver driver_cxx delete delete_cxx clone clone_cxx test_child" \
		check-no-cxx-runtime check check-outputs || exit 1; done

# test_frames walks frame records as a profiler does, and names what it
# finds with dladdr: built with frame pointers and unwind tables, its
# functions exported, as test_frames_cxx's (C++, the C++ driver).
$(O)/test_frames.o: TEST_CC += -fno-omit-frame-pointer -funwind-tables
$(O)/test_frames $(O)/test_frames_cxx: TESTLIBS += -rdynamic
$(O)/test_frames_cxx: $(O)/test_frames_cxx.o $(O)/libcoroutine.a
	$(CXX) $(LDFLAGS) $^ $(TESTLIBS) -o $@
