# mk/cross.mk - other Linux targets under qemu-user, musl, and macOS (assembled
# and compared, not run).

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

# The longest first, so that make -j2 ends them together.
CROSS_TESTS := $(addprefix cross-test-,aarch64-checked $(CROSS_SUITE_TARGETS) $(CROSS_DRIVER_TARGETS) i686-sse)
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

# The checked build (CHECKED=1) on aarch64: the core checks, threads, the
# guard and the bug programs (see tools.mk); the whole suite runs checked on
# x86_64 (matrix-checked).  qemu-user gives a signal no fault syndrome, so
# the report says "touched" there, not "read" or "wrote to" as on the hardware.
CROSS_CHECKED_TESTS := driver driver_cxx test_threads test_guard test_stack test_delete test_delete_cxx test_clone
# Then the same under ASan, with its bug programs (sanitize-checked's): its
# runtime linked in, as qemu is given no -L to find the cross one, and no
# leak check (LeakSanitizer cannot run under qemu-user).  Without driver and
# test_clone, which take a minute there: what aarch64 adds under ASan, the
# scan of a slice and its registers for fake frames, the bug programs check.
CROSS_ASAN := -fsanitize=address -fno-omit-frame-pointer
CROSS_CHECKED_ASAN_TESTS := $(filter-out driver test_clone,$(CROSS_CHECKED_TESTS))
cross-test-aarch64-checked:
	@for b in $(BACKENDS); do $(MAKE) --no-print-directory BACKEND=$$b CHECKED=1 CHECKED_ACCESS_UNKNOWN=1 \
		TESTS="$(CROSS_CHECKED_TESTS)" $(call cross-vars,aarch64,$(B)/aarch64-checked) \
		check check-checked-bugs || exit 1; done
	@for b in $(BACKENDS); do $(MAKE) --no-print-directory BACKEND=$$b CHECKED=1 TESTS="$(CROSS_CHECKED_ASAN_TESTS)" \
		$(call cross-vars,aarch64,$(B)/aarch64-checked-asan) CFLAGS="$(CFLAGS) $(CROSS_ASAN)" \
		CXXFLAGS="$(CXXFLAGS) $(CROSS_ASAN)" LDFLAGS="$(LDFLAGS) $(CROSS_ASAN) -static-libasan" \
		CLINK=$(CROSS_aarch64)g++ ASAN_OPTIONS=detect_leaks=0:detect_stack_use_after_return=1 \
		check check-checked-asan-bugs || exit 1; done

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
# checks that need no CMocka (none is built for musl): test/platform/driver.c, with
# the guard and thread checks, and coroutine_clone's (clone), and in a checked build
# too, with its bug programs.  Not the exception checks (driver_cxx, clone_cxx): there
# is no C++ runtime for musl (libstdc++ is built for glibc).  musl-gcc, the C
# driver, compiles coroutine.cpp and main.cpp as C++ against musl's headers;
# the C++ example is left out (libstdc++ is built for glibc).  And
# test_delete.c without CMocka (delete), whose cleanups libgcc's unwinder
# runs: the libgcc_eh that musl-gcc links was built for glibc and asks for
# _dl_find_object, which test/support/musl_find_object.c gives it, in a
# program linked with the table it looks for (--eh-frame-hdr).
MUSL_GCC ?= musl-gcc
MUSL_DELETE = DELETE_SUPPORT=$(1)/asm/musl_find_object.o LDFLAGS="$(LDFLAGS) -Wl,--eh-frame-hdr"
musl-test:
	$(MUSL_GCC) -std=c++11 -fsyntax-only coroutine.cpp 2>&1 | grep -F 'build coroutine.cpp with -DCOROUTINE_ASM=1'
	@$(MAKE) --no-print-directory BACKEND=asm B=$(B)/musl CC=$(MUSL_GCC) CXX=$(MUSL_GCC) EXAMPLES_CXX= \
		$(call MUSL_DELETE,$(B)/musl) TESTS="driver delete clone test_child" check-no-cxx-runtime check check-outputs
	@$(MAKE) --no-print-directory BACKEND=asm B=$(B)/musl-checked CC=$(MUSL_GCC) CXX=$(MUSL_GCC) CHECKED=1 \
		$(call MUSL_DELETE,$(B)/musl-checked) TESTS="driver delete clone" check check-checked-bugs

# ---- macOS (Mach-O): assembled and compared, not run ----------------------------
# Needs clang and llvm (llvm-nm, llvm-objdump).  Each Apple target's object
# must have the entry points and the instructions of the ELF object of the
# same architecture (test/platform/macos_check.sh).
MACOS_TARGETS := x86_64-apple-macos10.15:x86_64-linux-gnu arm64-apple-macos11:aarch64-linux-gnu

.PHONY: macos-check
macos-check:
	@for t in $(MACOS_TARGETS); do test/platform/macos_check.sh asm_switch.S $(B)/macos $${t%%:*} $${t#*:} || exit 1; done

