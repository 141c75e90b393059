# Makefile for the shared-stack coroutine library.  `make help` lists the targets.
CC       ?= cc
CXX      ?= g++
AR       ?= ar
CFLAGS   ?= -O2 -g
CXXFLAGS ?= -O2 -g
LDFLAGS  ?=
PREFIX   ?= /usr/local
DESTDIR  ?=
ASM      ?= 0

# Backends: ucontext (swapcontext) and asm (asm_switch.S).  `make ASM=1`
# builds the demo and the library with the assembly switch.
BACKENDS := ucontext asm
ifeq ($(ASM),1)
BACKEND := asm
else
BACKEND := ucontext
endif

WARN    := -Wall -Wextra -Wpedantic
# The library is C with a C++ spelling: no exceptions, no RTTI, so that a C
# program links it with the C compiler driver and no C++ runtime.
LIBFLAGS := -std=c++11 -fno-exceptions -fno-rtti
DEFS_ucontext :=
DEFS_asm      := -DCOROUTINE_ASM=1
TESTS := $(basename $(notdir $(wildcard test/test_*.c)))

.PHONY: all run test install uninstall clean help
all: main libcoroutine.a

# The top-level artifacts are copies of the selected backend's; build/selected
# changes only when ASM does, so that switching backends relinks them.
$(shell mkdir -p build; echo $(BACKEND) | cmp -s - build/selected || echo $(BACKEND) > build/selected)

main: build/$(BACKEND)/main build/selected
	cp $< $@

libcoroutine.a: build/$(BACKEND)/libcoroutine.a build/selected
	cp $< $@

run: main
	./main

build/%/coroutine.o: coroutine.cpp coroutine.h
	@mkdir -p $(@D)
	$(CXX) $(CPPFLAGS) $(DEFS_$*) $(LIBFLAGS) $(WARN) $(CXXFLAGS) -c $< -o $@

build/asm/asm_switch.o: asm_switch.S
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

build/ucontext/libcoroutine.a: build/ucontext/coroutine.o
build/asm/libcoroutine.a: build/asm/coroutine.o build/asm/asm_switch.o
build/%/libcoroutine.a:
	rm -f $@
	$(AR) rcs $@ $^

build/%/main: main.cpp coroutine.h build/%/libcoroutine.a
	$(CXX) $(CPPFLAGS) $(WARN) $(CXXFLAGS) $(LDFLAGS) $< build/$*/libcoroutine.a -o $@

# Tests are C programs linked with the C driver: that they link at all
# proves that the library needs no C++ runtime.
TESTLIBS := -lcmocka -lpthread -lm

build/test/%.o: test/%.c coroutine.h $(wildcard test/*.h)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(WARN) $(CFLAGS) -I. -c $< -o $@

build/ucontext/test_%: build/test/test_%.o build/ucontext/libcoroutine.a
	$(CC) $(LDFLAGS) $^ $(TESTLIBS) -o $@

build/asm/test_%: build/test/test_%.o build/asm/libcoroutine.a
	$(CC) $(LDFLAGS) $^ $(TESTLIBS) -o $@

test: $(foreach b,$(BACKENDS),$(addprefix build/$(b)/,$(TESTS)))
	@for t in $^; do echo "== $$t"; ./$$t || exit 1; done

coroutine.pc: coroutine.pc.in
	sed 's|@PREFIX@|$(PREFIX)|' $< > $@

install: libcoroutine.a coroutine.pc
	install -d $(DESTDIR)$(PREFIX)/include $(DESTDIR)$(PREFIX)/lib/pkgconfig
	install -m 644 coroutine.h $(DESTDIR)$(PREFIX)/include/coroutine.h
	install -m 644 libcoroutine.a $(DESTDIR)$(PREFIX)/lib/libcoroutine.a
	install -m 644 coroutine.pc $(DESTDIR)$(PREFIX)/lib/pkgconfig/coroutine.pc

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/include/coroutine.h $(DESTDIR)$(PREFIX)/lib/libcoroutine.a \
	      $(DESTDIR)$(PREFIX)/lib/pkgconfig/coroutine.pc

clean:
	rm -rf build main libcoroutine.a coroutine.pc

# ---- Test suite extras ------------------------------------------------------
# The tests of misuse and out-of-memory also run against an NDEBUG build of
# the library (build/ndebug: ucontext with -DNDEBUG), which proves that its
# checks are not asserts.
# test_alloc is linked with --wrap so that the library's allocations go
# through its failure-injecting wrappers.  `make test` refuses a library that
# needs any C++ runtime symbol (mangled names, exceptions, unwinding).
NM                  ?= nm
NDEBUG_TESTS        := test_misuse test_alloc
DEFS_ndebug         := -DNDEBUG
ALLOC_WRAPS         := -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=free,--wrap=mmap,--wrap=munmap
CXX_RUNTIME_SYMBOLS := ^(_Z|__cxa_|__gxx_personality|_Unwind_)

.PHONY: check-no-cxx-runtime

# Keep the test objects between runs instead of rebuilding them every time.
.SECONDARY: $(addprefix build/test/,$(addsuffix .o,$(TESTS)))

build/ndebug/libcoroutine.a: build/ndebug/coroutine.o

build/ndebug/test_%: build/test/test_%.o build/ndebug/libcoroutine.a
	$(CC) $(LDFLAGS) $^ $(TESTLIBS) -o $@

build/%/test_alloc: TESTLIBS += $(ALLOC_WRAPS)

# The core rule for `test` runs every prerequisite it is given; the check is
# order-only so that it runs first without being run as a test.
test: $(addprefix build/ndebug/,$(NDEBUG_TESTS)) | check-no-cxx-runtime

check-no-cxx-runtime: $(foreach b,$(BACKENDS) ndebug,build/$(b)/libcoroutine.a)
	@for lib in $^; do \
		if $(NM) -u $$lib | awk '{ print $$NF }' | grep -E '$(CXX_RUNTIME_SYMBOLS)'; then \
			echo "$$lib needs the C++ runtime for the symbols above"; exit 1; \
		fi; \
	done

# ---- cross-test: the demo and the suite on aarch64, under qemu-user --------
# Needs g++-aarch64-linux-gnu, qemu-user and libcmocka-dev:arm64 (multiarch).
CROSS     ?= aarch64-linux-gnu-
CROSS_CC  ?= $(CROSS)gcc
CROSS_CXX ?= $(CROSS)g++
CROSS_AR  ?= $(CROSS)ar
QEMU      ?= qemu-aarch64
CROSS_DIRS := $(addprefix build/aarch64-,$(BACKENDS))

.PHONY: cross-test
build/aarch64-%/coroutine.o: coroutine.cpp coroutine.h
	@mkdir -p $(@D)
	$(CROSS_CXX) $(CPPFLAGS) $(DEFS_$*) $(LIBFLAGS) $(WARN) $(CXXFLAGS) -c $< -o $@

build/aarch64-asm/asm_switch.o: asm_switch.S
	@mkdir -p $(@D)
	$(CROSS_CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

build/aarch64-ucontext/libcoroutine.a: build/aarch64-ucontext/coroutine.o
build/aarch64-asm/libcoroutine.a: build/aarch64-asm/coroutine.o build/aarch64-asm/asm_switch.o
build/aarch64-%/libcoroutine.a:
	rm -f $@
	$(CROSS_AR) rcs $@ $^

build/aarch64-%/main: main.cpp coroutine.h build/aarch64-%/libcoroutine.a
	$(CROSS_CXX) $(CPPFLAGS) $(WARN) $(CXXFLAGS) $(LDFLAGS) $< build/aarch64-$*/libcoroutine.a -o $@

build/aarch64-test/%.o: test/%.c coroutine.h $(wildcard test/*.h)
	@mkdir -p $(@D)
	$(CROSS_CC) $(CPPFLAGS) $(WARN) $(CFLAGS) -I. -c $< -o $@

build/aarch64-ucontext/test_%: build/aarch64-test/test_%.o build/aarch64-ucontext/libcoroutine.a
	$(CROSS_CC) $(LDFLAGS) $^ $(TESTLIBS) -o $@

build/aarch64-asm/test_%: build/aarch64-test/test_%.o build/aarch64-asm/libcoroutine.a
	$(CROSS_CC) $(LDFLAGS) $^ $(TESTLIBS) -o $@

# The demo's output must be byte-identical to the native ucontext demo's.
build/main.out: build/ucontext/main
	./$< > $@

cross-test: build/main.out $(foreach d,$(CROSS_DIRS),$(d)/main $(addprefix $(d)/,$(TESTS)))
	@for d in $(CROSS_DIRS); do echo "== $$d/main"; \
		$(QEMU) $$d/main | cmp - build/main.out || exit 1; done
	@for t in $(filter $(addsuffix /test_%,$(CROSS_DIRS)),$^); do echo "== $$t"; \
		$(QEMU) $$t || exit 1; done

# ---- Examples and install-check (README: "Examples") -------------------
# Each example is built against each backend, in build/<backend>/examples/;
# test_examples runs them (found beside itself) and compares their output
# with examples/<name>.expected.  C examples are linked with the C driver.
EXAMPLES_C   := game generator
EXAMPLES_CXX := script
EXAMPLES     := $(EXAMPLES_C) $(EXAMPLES_CXX)
LINK_EXAMPLE  = $(if $(filter $(EXAMPLES_CXX),$(notdir $@)),$(CXX),$(CC))
INSTALL_CHECK := build/install-check
# pkg-config reads only the installed coroutine.pc and prefixes its paths
# with the temporary DESTDIR.
INSTALLED_PKG_CONFIG := PKG_CONFIG_LIBDIR=$(CURDIR)/$(INSTALL_CHECK)$(PREFIX)/lib/pkgconfig \
	PKG_CONFIG_SYSROOT_DIR=$(CURDIR)/$(INSTALL_CHECK) pkg-config

.PHONY: examples install-check
.SECONDARY: $(EXAMPLES:%=build/examples/%.o)
examples: $(addprefix build/$(BACKEND)/examples/,$(EXAMPLES))

build/examples/%.o: examples/%.c coroutine.h
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -I. $(WARN) $(CFLAGS) -c $< -o $@

build/examples/%.o: examples/%.cpp coroutine.h
	@mkdir -p $(@D)
	$(CXX) $(CPPFLAGS) -I. $(WARN) $(CXXFLAGS) -c $< -o $@

build/ucontext/examples/%: build/examples/%.o build/ucontext/libcoroutine.a
	@mkdir -p $(@D)
	$(LINK_EXAMPLE) $(LDFLAGS) $^ -o $@

build/asm/examples/%: build/examples/%.o build/asm/libcoroutine.a
	@mkdir -p $(@D)
	$(LINK_EXAMPLE) $(LDFLAGS) $^ -o $@

# Order-only: the examples and the demo must exist when the test runs, but
# they are not linked into it.
build/ucontext/test_examples: | $(addprefix build/ucontext/examples/,$(EXAMPLES)) build/ucontext/main
build/asm/test_examples: | $(addprefix build/asm/examples/,$(EXAMPLES)) build/asm/main

# Installs into a scratch DESTDIR, builds the generator example against the
# installed copy through pkg-config, checks its output, then uninstalls and
# checks that nothing is left behind.
install-check:
	rm -rf $(INSTALL_CHECK)
	$(MAKE) install DESTDIR=$(CURDIR)/$(INSTALL_CHECK)
	$(CC) $(CFLAGS) $(LDFLAGS) examples/generator.c \
		$$($(INSTALLED_PKG_CONFIG) --cflags --libs coroutine) -o build/installed-generator
	./build/installed-generator > build/installed-generator.out
	diff -u examples/generator.expected build/installed-generator.out
	$(MAKE) uninstall DESTDIR=$(CURDIR)/$(INSTALL_CHECK)
	test -z "$$(find $(INSTALL_CHECK) -type f)"
	rm -rf $(INSTALL_CHECK)
	@echo "install-check: OK"

# ---- Memory-safety tools, fuzzing and the build matrix --------------------
# sanitize: the suite under ASan+UBSan; valgrind: the suite under memcheck.
# Both run both backends, and both run the deliberately buggy programs of
# test/bugs/ too: the target fails if the tool stays silent about them.
SANITIZE := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
# No ASAN_OPTIONS are needed: the tests' forked children that must die of
# SIGSEGV or SIGABRT restore the default handlers, ASan's included.  Leak
# checking (on by default on x86_64) is asked for by name for other hosts.
# detect_stack_use_after_return=1 is not used: it moves locals to the heap,
# and test_stack finds the run stack through the address of a local.
SANITIZE_ENV := ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1
# --child-silent-after-fork: misuse tests fork children that abort on
# purpose, with schedules still open; their memory is not a leak of the
# suite.  The run stack is registered with memcheck by the library, so no
# --max-stackframe is needed to tell its switches from huge frames.
VALGRIND := valgrind -q --error-exitcode=1 --leak-check=full \
	--errors-for-leak-kinds=definite,indirect --show-leak-kinds=definite,indirect \
	--child-silent-after-fork=yes
EXPECT_REPORT := test/bugs/expect_report.sh
SANITIZE_BUGS := heap_overflow stack_overflow stack_overflow_across_yield
SANITIZE_TESTS := $(foreach b,$(BACKENDS),$(addprefix build/asan-$(b)/,$(TESTS)))
VALGRIND_TESTS := $(foreach b,$(BACKENDS),$(addprefix build/$(b)/,$(TESTS)))
# fuzz: libFuzzer needs clang, whatever CC and CXX are.
FUZZ_CC  := clang
FUZZ_CXX := clang++
FUZZ_SANITIZE := -fsanitize=address,undefined -fno-sanitize-recover=all -g -O1
SECONDS ?= 60
# matrix: -Werror builds and runs of the suite, each in a copy of the sources
# under build/matrix/NAME, with these flag sets and both compilers.
MATRIX_SOURCES := Makefile coroutine.h coroutine.cpp coroutine.pc.in main.cpp test $(wildcard asm_switch.S)
MATRIX_SETS := O0 O2 O3 protectall hardened
MATRIX_FLAGS_O0 := -O0 -g
MATRIX_FLAGS_O2 := -O2 -g
MATRIX_FLAGS_O3 := -O3 -g
MATRIX_FLAGS_protectall := -O2 -g -fstack-protector-all
# Debian's hardening flags (dpkg-buildflags is in dpkg-dev); C and C++ get
# the same ones.  Deferred (=): dpkg-buildflags runs only for the matrix.
HARDENING = DEB_BUILD_MAINT_OPTIONS=hardening=+all dpkg-buildflags --get
MATRIX_FLAGS_hardened = $(shell $(HARDENING) CFLAGS)
MATRIX_CPPFLAGS_hardened = $(shell $(HARDENING) CPPFLAGS)
MATRIX_LDFLAGS_hardened = $(shell $(HARDENING) LDFLAGS)
MATRIX_GCC := $(addprefix matrix-gcc-,$(MATRIX_SETS))
MATRIX_CLANG := $(addprefix matrix-clang-,$(MATRIX_SETS))
MATRIX_STDS := c++11 c++14 c++17 c++20

.PHONY: sanitize valgrind fuzz matrix matrix-std $(MATRIX_GCC) $(MATRIX_CLANG)
# build/asan/compilers changes when the compilers or flags do, so that
# `make sanitize CC=clang CXX=clang++` after a gcc run rebuilds everything.
SANITIZE_ID := $(CC) $(CXX) $(CPPFLAGS) $(CFLAGS) $(CXXFLAGS) $(LDFLAGS)
$(shell mkdir -p build/asan; echo '$(SANITIZE_ID)' | cmp -s - build/asan/compilers || echo '$(SANITIZE_ID)' > build/asan/compilers)
# Keep the objects of the tool builds between runs, as the suite's are kept.
.SECONDARY: $(patsubst %,build/asan/test/%.o,$(TESTS) $(addprefix bugs/,$(SANITIZE_BUGS))) \
	build/test/bugs/uninitialised.o

# The test programs of the two tool targets are linked with the C++ driver:
# clang's -fsanitize=function (part of "undefined") needs the C++ runtime.
build/asan-%/coroutine.o: coroutine.cpp coroutine.h build/asan/compilers
	@mkdir -p $(@D)
	$(CXX) $(CPPFLAGS) $(DEFS_$*) $(LIBFLAGS) $(WARN) $(CXXFLAGS) $(SANITIZE) -c $< -o $@

build/asan-ucontext/libcoroutine.a: build/asan-ucontext/coroutine.o
build/asan-asm/libcoroutine.a: build/asan-asm/coroutine.o build/asm/asm_switch.o

build/asan/test/%.o: test/%.c coroutine.h $(wildcard test/*.h) build/asan/compilers
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(WARN) $(CFLAGS) $(SANITIZE) -I. -c $< -o $@

build/test/test_model.o build/asan/test/test_model.o: test/model.c

build/asan-ucontext/%: build/asan/test/%.o build/asan-ucontext/libcoroutine.a
	@mkdir -p $(@D)
	$(CXX) $(LDFLAGS) $(SANITIZE) $^ $(TESTLIBS) -o $@

build/asan-asm/%: build/asan/test/%.o build/asan-asm/libcoroutine.a
	@mkdir -p $(@D)
	$(CXX) $(LDFLAGS) $(SANITIZE) $^ $(TESTLIBS) -o $@

build/ucontext/bugs/%: build/test/bugs/%.o build/ucontext/libcoroutine.a
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) $^ -o $@

build/asm/bugs/%: build/test/bugs/%.o build/asm/libcoroutine.a
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) $^ -o $@

sanitize: $(SANITIZE_TESTS) $(foreach b,$(BACKENDS),$(addprefix build/asan-$(b)/bugs/,$(SANITIZE_BUGS)))
	@for t in $(SANITIZE_TESTS); do echo "== $$t"; $(SANITIZE_ENV) ./$$t || exit 1; done
	@for b in $(BACKENDS); do \
	  $(EXPECT_REPORT) heap-buffer-overflow build/asan-$$b/bugs/heap_overflow && \
	  $(EXPECT_REPORT) stack-buffer-overflow build/asan-$$b/bugs/stack_overflow && \
	  $(EXPECT_REPORT) stack-buffer-overflow build/asan-$$b/bugs/stack_overflow_across_yield || exit 1; \
	done

valgrind: $(VALGRIND_TESTS) $(foreach b,$(BACKENDS),build/$(b)/bugs/uninitialised)
	@for t in $(VALGRIND_TESTS); do echo "== valgrind $$t"; $(VALGRIND) ./$$t || exit 1; done
	@for b in $(BACKENDS); do \
	  $(EXPECT_REPORT) "Conditional jump or move depends on uninitialised value" \
	    $(VALGRIND) build/$$b/bugs/uninitialised || exit 1; \
	done

build/fuzz-%/coroutine.o: coroutine.cpp coroutine.h
	@mkdir -p $(@D)
	$(FUZZ_CXX) $(DEFS_$*) $(LIBFLAGS) $(WARN) $(FUZZ_SANITIZE) -fsanitize=fuzzer-no-link -c $< -o $@

build/fuzz-%/fuzz_model.o: fuzz/fuzz_model.c test/model.c test/model.h coroutine.h
	@mkdir -p $(@D)
	$(FUZZ_CC) $(WARN) $(FUZZ_SANITIZE) -fsanitize=fuzzer -I. -Itest -c $< -o $@

build/fuzz-ucontext/fuzz_model: build/fuzz-ucontext/fuzz_model.o build/fuzz-ucontext/coroutine.o
build/fuzz-asm/fuzz_model: build/fuzz-asm/fuzz_model.o build/fuzz-asm/coroutine.o build/asm/asm_switch.o
build/fuzz-%/fuzz_model:
	$(FUZZ_CXX) $(FUZZ_SANITIZE) -fsanitize=fuzzer $^ -o $@

# SECONDS of fuzzing per backend; the corpus grows in build/fuzz-*/corpus.
fuzz: $(foreach b,$(BACKENDS),build/fuzz-$(b)/fuzz_model)
	@for b in $(BACKENDS); do \
	  mkdir -p build/fuzz-$$b/corpus && \
	  ./build/fuzz-$$b/fuzz_model -max_total_time=$(SECONDS) -print_final_stats=1 build/fuzz-$$b/corpus || exit 1; \
	done

matrix: $(MATRIX_GCC) $(MATRIX_CLANG) matrix-std

# $(1) $(2): the C and C++ compilers; $(3): the flag set.
define matrix_build
	@echo "== $@"
	@rm -rf build/matrix/$@ && mkdir -p build/matrix/$@ && cp -r $(MATRIX_SOURCES) build/matrix/$@/
	@+$(MAKE) -s --no-print-directory -C build/matrix/$@ all test CC=$(1) CXX=$(2) \
	  WARN="$(WARN) -Werror" CFLAGS="$(MATRIX_FLAGS_$(3))" CXXFLAGS="$(MATRIX_FLAGS_$(3))" \
	  CPPFLAGS="$(MATRIX_CPPFLAGS_$(3))" LDFLAGS="$(MATRIX_LDFLAGS_$(3))" \
	  > build/matrix/$@.log 2>&1 || { cat build/matrix/$@.log; exit 1; }
endef

$(MATRIX_GCC): matrix-gcc-%:
	$(call matrix_build,gcc,g++,$*)

$(MATRIX_CLANG): matrix-clang-%:
	$(call matrix_build,clang,clang++,$*)

# The library alone in every standard it supports, compile-only.
matrix-std:
	@for cxx in g++ clang++; do for std in $(MATRIX_STDS); do for defs in "" "$(DEFS_asm)"; do \
	  echo "== $$cxx -std=$$std $$defs"; \
	  $$cxx -std=$$std $$defs -fno-exceptions -fno-rtti $(WARN) -Werror -O2 -c coroutine.cpp -o /dev/null || exit 1; \
	done; done; done

help:
	@echo "make            build the demo (main) and libcoroutine.a; ASM=1 for the assembly switch"
	@echo "make run        build and run the demo"
	@echo "make test       build and run the CMocka suite against both backends (BACKENDS=...),"
	@echo "                test_misuse and test_alloc against an NDEBUG build too, after check-no-cxx-runtime"
	@echo "make check-no-cxx-runtime  fail if the library needs a C++ runtime symbol"
	@echo "make install    install header, library and pkg-config file (PREFIX, DESTDIR)"
	@echo "make uninstall  remove what install put there"
	@echo "make cross-test build the demo and the suite for aarch64 (both backends), run them under qemu"

	@echo "make examples   build the examples (examples/) for the selected backend"
	@echo "make install-check  install into a scratch DESTDIR, build and run an example against it"
	@echo "                with pkg-config, then uninstall and check that nothing is left"
	@echo "make clean      remove everything built"
	@echo "make sanitize   the suite under ASan+UBSan, both backends; ASan must catch test/bugs/"
	@echo "                (CC=clang CXX=clang++ for clang's sanitizers)"
	@echo "make valgrind   the suite under valgrind memcheck, both backends; memcheck must catch test/bugs/"
	@echo "make fuzz       libFuzzer on random programs, SECONDS=60 per backend (needs clang)"
	@echo "make matrix     -Werror builds and runs: g++/clang++ x -O0/-O2/-O3/-fstack-protector-all/Debian hardening, and C++11..20"
