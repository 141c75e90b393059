# mk/tools.mk - the suite under ASan+UBSan and valgrind, fuzzing, and the
# build matrix.

# ---- Memory-safety tools -------------------------------------------------------
# sanitize: the suite under ASan+UBSan; valgrind: under memcheck, and the
# demo and the examples too (test_examples runs them outside memcheck).
# Both run both backends, then deliberately buggy programs (test/bugs/): the target
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
	--child-silent-after-fork=yes --suppressions=$(CURDIR)/test/support/valgrind.supp
EXPECT_REPORT := test/bugs/expect_report.sh
ASAN_BUGS := heap_overflow:heap-buffer-overflow stack_overflow:stack-buffer-overflow \
	stack_overflow_across_yield:stack-buffer-overflow stack_overflow_in_a_copy:stack-buffer-overflow
# BUGS is a list of words: dots stand for the spaces of a report (grep regex).
MEMCHECK_BUGS := uninitialised:Conditional.jump.or.move.depends.on.uninitialised.value

$(O)/bugs/%.o: test/bugs/%.c coroutine.h
	@mkdir -p $(@D)
	$(TEST_CC) -c $< -o $@

$(O)/bugs/%$(EXE): $(O)/bugs/%.o $(O)/libcoroutine.a
	$(CLINK) $(LDFLAGS) $^ -o $@

# Runs each bug program of BUGS (name:report) under $(RUN), expecting the report.
check-bugs:
	@for bug in $(BUGS); do $(MAKE) --no-print-directory $(O)/bugs/$${bug%%:*} && \
		$(EXPECT_REPORT) "$${bug#*:}" $(RUN) $(O)/bugs/$${bug%%:*} || exit 1; done

# Sanitized programs are linked with the C++ driver: clang's
# -fsanitize=function (part of "undefined") needs the C++ runtime.  The build
# directory is named after the compiler, so gcc and clang builds coexist.
SANITIZE_FLAGS = CFLAGS="$(CFLAGS) $(SANITIZE)" CXXFLAGS="$(CXXFLAGS) $(SANITIZE)" \
	LDFLAGS="$(LDFLAGS) $(SANITIZE)" CLINK=$(CXX)
SANITIZE_VARS = B=$(B)/asan-$(notdir $(CC)) $(SANITIZE_FLAGS)

.PHONY: check-bugs sanitize valgrind
sanitize:
	@for b in $(BACKENDS); do $(MAKE) --no-print-directory BACKEND=$$b $(SANITIZE_VARS) check \
		&& $(MAKE) --no-print-directory BACKEND=$$b $(SANITIZE_VARS) BUGS="$(ASAN_BUGS)" check-bugs \
		|| exit 1; done

valgrind:
	@for b in $(BACKENDS); do $(MAKE) --no-print-directory BACKEND=$$b RUN="$(VALGRIND)" check check-outputs \
		&& $(MAKE) --no-print-directory BACKEND=$$b RUN="$(VALGRIND)" BUGS="$(MEMCHECK_BUGS)" check-bugs \
		|| exit 1; done

# ---- The checked build ---------------------------------------------------------
# CHECKED=1 (-DCOROUTINE_CHECKED=1): main cannot touch the run stack.  The
# bug programs break the shared-stack rule and must stop with the report
# naming the coroutine, the schedule and the access (test/bugs/expect_checked.sh):
# the coroutine whose saved slice reaches the local, though another ran
# after it in its window (main_reads_earlier_local); the culprit among
# entities alike (check-entities, below); another thread, named as such
# (thread_reads_local); a coroutine of another window of the same
# schedule (coroutine_reads_other) or of another schedule (elsewhere);
# own_handler checks that the program's own SIGSEGV handler still runs,
# after the report and for a fault that is not the check's.  On POSIX,
# checked_probes probes every kind of address and fault, and the program's
# handler of every kind of flags, and checked_copies hot-reloads plugins
# that each have a copy of the checked library, in every order (three
# copies of reload_plugin beside it, the second's note 8-aligned: below).
# Run under $(RUN); CHECKED_ACCESS_UNKNOWN=1 where the report cannot tell
# a read from a write.
EXPECT_CHECKED = CHECKED_ACCESS_UNKNOWN=$(CHECKED_ACCESS_UNKNOWN) test/bugs/expect_checked.sh
CHECKED_BUGS := main_reads_local main_writes_local main_reads_finished main_reads_earlier_local entities \
	thread_reads_local own_handler coroutine_reads_other checked_copies $(if $(EXE),,checked_probes)
$(addprefix $(O)/bugs/,$(addsuffix .o,$(CHECKED_BUGS))): test/bugs/stale_pointer.h test/support/checked_windows.h
PLUGIN_FILE := $(if $(EXE),.dll,.so)
CHECKED_COPIES := $(addprefix $(O)/bugs/reload_plugin,$(addsuffix $(PLUGIN_FILE),_first _second _third))
$(filter-out %_second.so,$(CHECKED_COPIES)): $(O)/reload_plugin$(PLUGIN_FILE)
	@mkdir -p $(@D)
	cp $< $@
# On ELF the second is linked with an empty .note.coroutine of alignment 8
# (test/support/note_aligned_8.c): the library's note then lies in a
# PT_NOTE segment of alignment 8, laid out with 8-byte padding, which
# readelf must show, and the library must still find it there.
READELF ?= readelf
$(O)/bugs/reload_plugin_second.so: $(O)/pic/reload_plugin.o $(PICOBJS_$(BACKEND)) $(O)/pic/note_aligned_8.o
	$(CC) -shared -Wl,-Bsymbolic $(LDFLAGS) $^ -o $@
	@$(READELF) -lW $@ | awk '/^  [A-Z_]+ +0x/ { type[n] = $$1; align[n++] = $$NF } \
		/^   [0-9]+ / && / \.note\.coroutine( |$$)/ && type[$$1 + 0] == "NOTE" && align[$$1 + 0] == "0x8" \
		{ found = 1 } END { exit !found }' \
		|| { echo "$@: .note.coroutine is not in a PT_NOTE segment of alignment 8"; exit 1; }
$(O)/pic/note_aligned_8.o: test/support/note_aligned_8.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(PIC) $(WARN) $(CFLAGS) -c $< -o $@
$(O)/bugs/checked_copies.o: test/support/reload.h test/support/modules.h
$(O)/bugs/checked_copies$(EXE): | $(CHECKED_COPIES)

.PHONY: check-checked-bugs matrix-checked
check-checked-bugs: $(addprefix $(O)/bugs/,$(addsuffix $(EXE),$(CHECKED_BUGS)))
	@$(EXPECT_CHECKED) read - $(RUN) $(O)/bugs/main_reads_local$(EXE)
	@$(EXPECT_CHECKED) "wrote to" - $(RUN) $(O)/bugs/main_writes_local$(EXE)
	@$(EXPECT_REPORT) "main.\(read\|touched\).the.run.stack.(top-[0-9]*,.schedule.0x[0-9a-f]*).while.no.coroutine.is.on.it" \
		$(RUN) $(O)/bugs/main_reads_finished$(EXE)
	@$(EXPECT_CHECKED) read - $(RUN) $(O)/bugs/main_reads_earlier_local$(EXE)
	@$(call check-entities,$(O)/bugs/entities$(EXE))
	@$(if $(RUN),,$(MAKE) -s --no-print-directory B=$(B)/O0 CFLAGS="$(CFLAGS) -O0" CXXFLAGS="$(CXXFLAGS) -O0" \
		$(B)/O0/$(BACKEND)/bugs/entities$(EXE) && $(call check-entities,$(B)/O0/$(BACKEND)/bugs/entities$(EXE)))
	@$(EXPECT_CHECKED) read - $(RUN) $(O)/bugs/thread_reads_local$(EXE)
	@$(EXPECT_CHECKED) read - $(RUN) $(O)/bugs/thread_reads_local$(EXE) numbered
	@$(EXPECT_CHECKED) read - $(RUN) $(O)/bugs/coroutine_reads_other$(EXE)
	@$(EXPECT_CHECKED) "wrote to" - $(RUN) $(O)/bugs/coroutine_reads_other$(EXE) write
	@$(EXPECT_CHECKED) read - $(RUN) $(O)/bugs/coroutine_reads_other$(EXE) elsewhere
	@$(EXPECT_CHECKED) read "the program's own handler ran" $(RUN) $(O)/bugs/own_handler$(EXE)
	@$(EXPECT_CHECKED) - "the program's own handler ran" $(RUN) $(O)/bugs/own_handler$(EXE) null
	@$(EXPECT_CHECKED) - "the program's own handler ran" $(RUN) $(O)/bugs/own_handler$(EXE) closed
	@RUN='$(RUN)' test/support/run.sh $(addprefix $(O)/bugs/,$(addsuffix $(EXE),$(filter checked_%,$(CHECKED_BUGS))))

# An engine's entities, all waiting alike (test/bugs/entities.c): the line
# names the culprit (13) alone among as many as there are windows (sharing
# 1) and among fifty (64 windows; 16 on Windows and 32-bit, where it names
# "13, 29 or 45"); 4, 5 and 6 entities to a window list "a, b, c or d",
# "a, b, c, d or 1 other", "... or 2 others"; and 1,000.  Natively again
# with the library and the program at -O0, where an id written past the
# four named shows.
ENTITIES_RUNS := "50 13" "sharing 1" "sharing 4" "sharing 5" "sharing 6" ""
check-entities = for args in $(ENTITIES_RUNS); do $(EXPECT_CHECKED) read - $(RUN) $(1) $$args || exit 1; done

# The checked build under ASan+UBSan (gcc's or clang's, as sanitize): the
# suite, then the bug programs.  ASan keeps a local whose address is taken
# in a fake stack (detect_stack_use_after_return=1, exported above), where
# the checked build poisons it while its coroutine is suspended: main's
# reads and writes, another thread's and another coroutine's
# (coroutine_reads_other), and write()'s (syscall_reads_local: ASan checks
# its buffer) stop with ASan's report and the line.  A finished
# coroutine's fake stack is gone with it: ASan's own SEGV report.  With
# detect_stack_use_after_return=0 the first open says that it cannot check.
SANITIZE_CHECKED_VARS = B=$(B)/asan-checked-$(notdir $(CC)) CHECKED=1 $(SANITIZE_FLAGS)
CHECKED_ASAN_BUGS := main_reads_local main_writes_local main_reads_earlier_local thread_reads_local coroutine_reads_other \
	main_reads_finished syscall_reads_local

.PHONY: check-checked-asan-bugs sanitize-checked
check-checked-asan-bugs: $(addprefix $(O)/bugs/,$(addsuffix $(EXE),$(CHECKED_ASAN_BUGS)))
	@$(EXPECT_CHECKED) read - $(RUN) $(O)/bugs/main_reads_local$(EXE)
	@$(EXPECT_CHECKED) "wrote to" - $(RUN) $(O)/bugs/main_writes_local$(EXE)
	@$(EXPECT_CHECKED) read - $(RUN) $(O)/bugs/main_reads_earlier_local$(EXE)
	@$(EXPECT_CHECKED) read - $(RUN) $(O)/bugs/thread_reads_local$(EXE)
	@$(EXPECT_CHECKED) read - $(RUN) $(O)/bugs/thread_reads_local$(EXE) numbered
	@$(EXPECT_CHECKED) read - $(RUN) $(O)/bugs/coroutine_reads_other$(EXE)
	@$(EXPECT_CHECKED) "wrote to" - $(RUN) $(O)/bugs/coroutine_reads_other$(EXE) write
	@$(EXPECT_CHECKED) read - $(RUN) $(O)/bugs/coroutine_reads_other$(EXE) elsewhere
	@$(EXPECT_REPORT) "AddressSanitizer: SEGV" $(RUN) $(O)/bugs/main_reads_finished$(EXE)
	@$(EXPECT_CHECKED) read - $(RUN) $(O)/bugs/syscall_reads_local$(EXE)
	@ASAN_OPTIONS=$(ASAN_OPTIONS):detect_stack_use_after_return=0 $(RUN) $(O)/bugs/coroutine_reads_other$(EXE) 2>&1 \
		| grep -q "^coroutine_open: .*only with ASAN_OPTIONS=detect_stack_use_after_return=1" \
		&& echo "ok: $(O)/bugs/coroutine_reads_other: notice at the first open without fake stacks" \
		|| { echo "FAIL: no notice of detect_stack_use_after_return=0 at the first open"; exit 1; }
	@! $(RUN) $(O)/bugs/coroutine_reads_other$(EXE) 2>&1 | grep "^coroutine_open: " \
		|| { echo "FAIL: the notice with detect_stack_use_after_return=1"; exit 1; }

sanitize-checked:
	@for b in $(BACKENDS); do $(MAKE) --no-print-directory BACKEND=$$b $(SANITIZE_CHECKED_VARS) check \
		&& $(MAKE) --no-print-directory BACKEND=$$b $(SANITIZE_CHECKED_VARS) check-checked-asan-bugs \
		|| exit 1; done

# The suite must pass in a checked build too, and the bugs stop: an entry of
# the matrix (natively: `make test CHECKED=1`; other targets add CHECKED=1
# to theirs, see cross.mk, windows.mk).
matrix-checked:
	@echo "== $@"
	@{ $(MAKE) -s --no-print-directory test CHECKED=1 NO_README_CHECK=1 B=$(B)/matrix/checked WARN="$(WARN) -Werror" && \
	   for b in $(BACKENDS); do $(MAKE) -s --no-print-directory CHECKED=1 B=$(B)/matrix/checked BACKEND=$$b \
		check-checked-bugs || exit 1; done; } > $(B)/matrix-checked.log 2>&1 || { cat $(B)/matrix-checked.log; exit 1; }

# ---- Fuzzing -------------------------------------------------------------------
# libFuzzer turns its bytes into programs of new/resume/yield/status (see
# test/support/model.h), run against the library and the reference model, SECONDS
# per backend.  It needs clang, whatever CC and CXX are.
FUZZ := -fsanitize=address,undefined -fno-sanitize-recover=all -g -O1
SECONDS ?= 60

$(O)/fuzz_model.o: fuzz/fuzz_model.c test/support/model.c test/support/model.h coroutine.h
	@mkdir -p $(@D)
	$(CC) $(WARN) $(CFLAGS) -fsanitize=fuzzer -I. -Itest/support -c $< -o $@

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
MATRIX_SETS := O0 O2 O3 protectall hardened
MATRIX_FLAGS_O0 := -O0 -g
MATRIX_FLAGS_O2 := -O2 -g
MATRIX_FLAGS_O3 := -O3 -g
MATRIX_FLAGS_protectall := -O2 -g -fstack-protector-all
# Debian's hardening flags (dpkg-buildflags is in dpkg-dev), and what README
# tells users to build coroutine code with, which Debian 12's leave out:
# -fstack-clash-protection, probes in every frame.  Deferred (=):
# dpkg-buildflags runs only for the matrix.
HARDENING = DEB_BUILD_MAINT_OPTIONS=hardening=+all dpkg-buildflags --get
MATRIX_FLAGS_hardened = $(shell $(HARDENING) CXXFLAGS) -fstack-clash-protection
MATRIX_CPPFLAGS_hardened = $(shell $(HARDENING) CPPFLAGS)
MATRIX_LDFLAGS_hardened = $(shell $(HARDENING) LDFLAGS)
MATRIX := $(foreach s,$(MATRIX_SETS),matrix-gcc-$(s) matrix-clang-$(s))
MATRIX_STDS := c++11 c++14 c++17 c++20

# matrix-COMPILER-SET: COMPILER is gcc or clang (their C++ drivers follow).
# make test's suites of both backends (BACKENDS_ONLY): README's checks build
# with README's own commands, whatever the matrix's compiler, and the NDEBUG
# and largest-stack builds check the source, not the flags; make test has
# run them once.
CXX_FOR_gcc := g++
CXX_FOR_clang := clang++
.PHONY: matrix matrix-std $(MATRIX)
matrix: $(MATRIX) matrix-std matrix-checked

$(MATRIX): matrix-%:
	@echo "== $@"
	@$(MAKE) -s --no-print-directory test BACKENDS_ONLY=1 B=$(B)/matrix/$* \
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

