# mk/windows.mk - Windows x64 under wine: MinGW-w64, and Microsoft's ABI
# (cl.exe, clang-cl) through clang.

# ---- Windows x64 (MinGW-w64) under wine --------------------------------------------
# And the checked build (CHECKED=1: see tools.mk): the same programs and the
# bug programs.  Needs g++-mingw-w64-x86-64, wine and wine64.  Everything is linked statically,
# so no DLL of MinGW's needs to be found.  CMocka is not packaged for MinGW:
# what runs is what test-without-cmocka runs (test/platform/driver.c, and the demo's
# and the examples' outputs), test/platform/win_stack.c, test/spec/test_reload.c
# (reload), the C++ exception tests, coroutine_delete's and coroutine_clone's,
# built without CMocka (driver_cxx, delete, delete_cxx, clone, clone_cxx), and
# the child-case runner itself
# (test_child).  wine's state lives in the build
# folder; creating it takes seconds, once.
MINGW ?= x86_64-w64-mingw32-
WINE  ?= wine
WIN_B := $(B)/windows
WINEPREFIX_DIR := $(CURDIR)/$(WIN_B)/wineprefix
WINE_RUN := env WINEPREFIX=$(WINEPREFIX_DIR) WINEDEBUG=-all $(WINE)
# __USE_MINGW_ANSI_STDIO: C99 printf (%zu) in the test programs too.
WINDOWS_VARS := B=$(WIN_B) BACKEND=asm EXE=.exe TEXT_CRLF=1 RUN="$(WINE_RUN)" \
	CC=$(MINGW)gcc CXX=$(MINGW)g++ AR=$(MINGW)ar NM=$(MINGW)nm OBJDUMP=$(MINGW)objdump \
	CPPFLAGS="$(CPPFLAGS) -D__USE_MINGW_ANSI_STDIO=1" LDFLAGS="$(LDFLAGS) -static"

.PHONY: windows-test

# What the Windows switch owes Windows: the TIB's stack fields, the end of
# unwinding, home space, xmm6-xmm15, FP control, __chkstk
# (test/platform/win_stack.c).
$(O)/win_stack$(EXE): $(O)/win_stack.o $(O)/libcoroutine.a
	$(CLINK) $(LDFLAGS) $^ -o $@

# C++ exceptions inside coroutines on Microsoft's ABI (windows-msvc-test).
$(O)/msvc_exceptions$(EXE): $(O)/msvc_exceptions.o $(O)/libcoroutine.a
	$(CXX) $(LDFLAGS) $^ -o $@

$(WINEPREFIX_DIR)/system.reg:
	mkdir -p $(WINEPREFIX_DIR)
	$(WINE_RUN) wineboot --init >/dev/null 2>&1

windows-test: $(WINEPREFIX_DIR)/system.reg
	@$(MAKE) --no-print-directory $(WINDOWS_VARS) TESTS="driver win_stack driver_cxx delete delete_cxx clone clone_cxx reload driver_dll dllmain test_child" \
		check check-outputs
	@$(MAKE) --no-print-directory windows-dll-test
	@$(MAKE) --no-print-directory windows-test-runtime-dll
	@$(MAKE) --no-print-directory $(WINDOWS_VARS) B=$(WIN_B)/checked CHECKED=1 \
		TESTS="driver win_stack driver_cxx delete delete_cxx clone clone_cxx reload" \
		check check-checked-bugs

# libcoroutine.dll as CMake and Meson build it, and programs linked with it
# or with the static library, import no DLL of MinGW's and run under wine
# with the DLL alone beside them (test/platform/windows_dll.sh; needs cmake, meson,
# ninja-build too).
.PHONY: windows-dll-test
windows-dll-test: $(WINEPREFIX_DIR)/system.reg
	test/platform/windows_dll.sh $(MINGW) $(WIN_B)/dll $(WINE_RUN)

# reload: test_reload.c without CMocka (test/support/plain_suite.h), which
# loads, drives and frees again and again, as a game engine reloads its
# game code, reload_plugin.dll (test/support/reload_plugin.c with the
# library built in) and libcoroutine.dll, both beside it.  The library's
# DLL is linked as CMake and Meson link it (with libgcc built in).
# DLL_LDFLAGS: what a DLL adds to the programs' LDFLAGS.
$(O)/reload.o: test/spec/test_reload.c $(TEST_HEADERS)
	@mkdir -p $(@D)
	$(TEST_CC) -DTEST_PLAIN -c $< -o $@

$(O)/reload$(EXE): $(O)/reload.o $(O)/libcoroutine.a | $(O)/reload_plugin.dll $(O)/reload_plugin_next.dll $(O)/libcoroutine.dll
	$(CLINK) $(LDFLAGS) $^ -o $@

$(O)/reload_plugin.dll: $(O)/reload_plugin.o $(LIBOBJS_$(BACKEND))
	$(CLINK) -shared $(LDFLAGS) $(DLL_LDFLAGS) $^ -o $@

# The same plugin under a second name, for reloads that overlap.
$(O)/reload_plugin_next.dll: $(O)/reload_plugin.dll
	cp $< $@

# libcoroutine.dll: coroutine.cpp compiled with COROUTINE_BUILD_DLL, so
# that it exports what coroutine.h marks COROUTINE_API and nothing else
# (Microsoft's linker exports nothing unmarked; MinGW's ld, everything
# when nothing is marked); and its import library beside it, written by
# the linker's option IMPLIB, named libcoroutine$(IMPLIB_SUFFIX).
IMPLIB ?= -Wl,--out-implib,
IMPLIB_SUFFIX ?= .dll.a
$(O)/dll/coroutine.o: coroutine.cpp coroutine.h
	@mkdir -p $(@D)
	$(CXX) $(CPPFLAGS) $(DEFS_$(BACKEND)) -DCOROUTINE_BUILD_DLL $(LIBFLAGS) $(WARN) $(CXXFLAGS) -c $< -o $@

$(O)/libcoroutine.dll: $(O)/dll/coroutine.o $(filter-out $(O)/coroutine.o,$(LIBOBJS_$(BACKEND)))
	$(CLINK) -shared $(LDFLAGS) $(DLL_LDFLAGS) $^ $(IMPLIB)$(O)/libcoroutine$(IMPLIB_SUFFIX) -o $@
	@$(OBJDUMP) -p $@ | awk '$$NF ~ /^coroutine_[a-z_]+$$/ { print $$NF }' | sort > $@.exports
	@sed -n 's/^COROUTINE_API .*\(coroutine_[a-z_]*\)(.*/\1/p' coroutine.h | sort | diff -u - $@.exports \
		|| { echo "$@ must export the functions coroutine.h marks COROUTINE_API, no other"; rm -f $@; exit 1; }

$(O)/libcoroutine$(IMPLIB_SUFFIX): $(O)/libcoroutine.dll ;

# driver_dll: driver.c and its model compiled with COROUTINE_DLL, so that
# they call the library through __imp_coroutine_* (dllimport), and linked
# through the import library: the DLL, beside it, runs the core checks.
DLL_USER_CC = $(TEST_CC) -DCOROUTINE_DLL -c $< -o $@
$(O)/dll/driver.o: test/platform/driver.c $(TEST_HEADERS)
	@mkdir -p $(@D)
	$(DLL_USER_CC)

$(O)/dll/model.o: test/support/model.c $(TEST_HEADERS)
	@mkdir -p $(@D)
	$(DLL_USER_CC)

$(O)/driver_dll$(EXE): $(O)/dll/driver.o $(O)/dll/model.o $(O)/libcoroutine$(IMPLIB_SUFFIX)
	@$(NM) $(O)/dll/driver.o | grep -q ' __imp_coroutine_open$$' \
		|| { echo "$(O)/dll/driver.o calls coroutine_open without dllimport"; exit 1; }
	$(CLINK) $(LDFLAGS) $^ -lm -o $@
	@$(OBJDUMP) -p $@ | grep -q 'DLL Name: libcoroutine.dll' \
		|| { echo "$@ does not import libcoroutine.dll"; rm -f $@; exit 1; }

# dllmain: what coroutine_open and coroutine_close do when dllmain_plugin.dll
# (test/support/dllmain_plugin.c, with the library built in) calls them
# from its DllMain, under the loader lock: they refuse, with their message.
$(O)/dllmain$(EXE): $(O)/dllmain.o $(O)/libcoroutine.a | $(O)/dllmain_plugin.dll
	$(CLINK) $(LDFLAGS) $^ -o $@

$(O)/dllmain_plugin.dll: $(O)/dllmain_plugin.o $(LIBOBJS_$(BACKEND))
	$(CLINK) -shared $(LDFLAGS) $(DLL_LDFLAGS) $^ -o $@

# The C++ exception tests linked against MinGW's libstdc++-6.dll (and
# libgcc_s_seh-1.dll, found through WINEPATH) instead of statically: the
# library must find the runtime's exception state in the DLL at run time.
MINGW_RUNTIME_DIR = $(dir $(shell $(MINGW)g++ -print-file-name=libstdc++-6.dll))

# And test_late_runtime's twin: a C program, linked with the C driver and
# importing no C++ runtime, loads a C++ DLL built against libstdc++-6.dll.
.PHONY: windows-test-runtime-dll
windows-test-runtime-dll: $(WINEPREFIX_DIR)/system.reg
	@$(MAKE) --no-print-directory $(WINDOWS_VARS) B=$(WIN_B)/runtime-dll LDFLAGS="$(LDFLAGS)" \
		RUN="env WINEPATH=$(MINGW_RUNTIME_DIR) $(WINE_RUN)" TESTS="driver_cxx late_runtime" check

# late_runtime: test_late_runtime.c without CMocka (test/support/plain_suite.h).  A
# DLL calls functions of the program that loads it through the program's
# import library: the program exports its symbols and writes one, which
# late_runtime_plugin.dll then links against, built with it.
$(O)/late_runtime.o: test/spec/test_late_runtime.c $(TEST_HEADERS)
	@mkdir -p $(@D)
	$(TEST_CC) -DTEST_PLAIN -c $< -o $@

$(O)/late_runtime$(EXE): $(O)/late_runtime.o $(O)/libcoroutine.a test/support/late_runtime_plugin.cpp test/support/late_runtime.h
	$(CLINK) $(LDFLAGS) $(O)/late_runtime.o $(O)/libcoroutine.a \
		-Wl,--export-all-symbols,--out-implib,$@.a -o $@
	@if $(MINGW)objdump -p $@ | grep -i 'DLL Name: lib\(stdc++\|c++\)'; then \
		echo "$@ imports the C++ runtime above: it must get one only with the DLL it loads"; \
		rm -f $@; exit 1; fi
	$(CXX) $(CPPFLAGS) $(WARN) $(CXXFLAGS) $(TEST_INCLUDES) -shared $(LDFLAGS) test/support/late_runtime_plugin.cpp $@.a \
		-o $(@D)/late_runtime_plugin.dll

# ---- Windows x64, Microsoft's ABI (cl.exe, clang-cl) under wine ------------------
# cl.exe does not run here.  What does: its view of coroutine.cpp (the file
# preprocessed as cl.exe sees it, _MSC_VER and neither __GNUC__ nor
# __clang__, must hold no GNU-only spelling in its own lines), and the
# ABI, through clang for x86_64-pc-windows-msvc (what clang-cl runs): the
# library, the demo, the C examples and despawn, driver, win_stack, msvc_exceptions,
# delete (test_delete.c, whose cleanups vcruntime runs), clone, clone_cxx, reload,
# driver_dll and dllmain (whose DLLs start at libwinecrt0's
# DllMainCRTStartup; libcoroutine.dll's import library is libcoroutine.lib),
# linked by lld-link against the MSVC C runtime's interface as wine
# provides it (headers: libwine-dev; import libraries and mainCRTStartup:
# wine64-tools), run under wine, outputs as on Linux.  Twice: with
# asm_switch.asm (llvm-ml) and the library in cl.exe's spellings
# (COROUTINE_MICROSOFT_SPELLINGS), as a cl.exe user builds it; and with
# asm_switch.S and the GNU spellings, as a clang-cl user can.  The two
# switch objects must also be the same instructions (test/platform/masm_twin_check.sh).
# No C++ standard library is built for this target here: of the C++
# examples, only despawn, which needs none (its destructors run through
# RtlUnwindEx), is built.  And a checked build (CHECKED=1), as windows-test's.
# Needs clang lld llvm libwine-dev wine64-tools wine wine64.
MSVC_B := $(B)/msvc
WINE_INCLUDE ?= /usr/include/wine/wine
WINE_LIBDIR  ?= /usr/lib/x86_64-linux-gnu/wine/x86_64-windows
MSVC_CC := clang --target=x86_64-pc-windows-msvc
# Wine's headers instead of clang's search path (clang's own stddef.h and
# intrinsics stay); the UCRT's declarations; wine's winnt.h defines
# _InterlockedCompareExchange128, which clang has built in.
MSVC_CPPFLAGS := -nostdlibinc -isystem $(WINE_INCLUDE)/msvcrt -isystem $(WINE_INCLUDE)/windows -D_UCRT \
	-D_InterlockedCompareExchange128=wine_InterlockedCompareExchange128
MSVC_LIBS := $(addprefix $(WINE_LIBDIR)/lib,winecrt0.a ucrtbase.a vcruntime140.a kernel32.a)
# The C runtime has the math functions: an empty m.lib answers -lm, as
# MinGW's empty libm.a does.
MSVC_LDFLAGS := -fuse-ld=lld -nostdlib -Wl,-entry:mainCRTStartup $(MSVC_B)/msvc_crt.o $(MSVC_LIBS) -L$(MSVC_B)
# cl.exe's spellings, compiled by clang: wine's intrin.h does not declare
# _BitScanForward64 (Microsoft's does), so clang declares it itself.
MSVC_SPELLINGS := CPPFLAGS="$(CPPFLAGS) $(MSVC_CPPFLAGS) -DCOROUTINE_MICROSOFT_SPELLINGS=1" \
	CXXFLAGS="$(CXXFLAGS) -Wno-implicit-function-declaration"
MSVC_VARS = BACKEND=asm EXE=.exe TEXT_CRLF=1 RUN="$(WINE_RUN)" EXAMPLES_CXX=despawn \
	CC="$(MSVC_CC)" CXX="$(MSVC_CC)" CLINK="$(MSVC_CC)" AR=llvm-ar NM=llvm-nm OBJDUMP=llvm-objdump \
	LDFLAGS="$(MSVC_LDFLAGS)" DLL_LDFLAGS=-Wl,-entry:DllMainCRTStartup \
	IMPLIB=-Wl,-implib: IMPLIB_SUFFIX=.lib
# What each of its builds runs (the first two also driver_dll and dllmain).
MSVC_TESTS := driver win_stack msvc_exceptions delete clone clone_cxx reload test_child
# GNU-only spellings cl.exe would reject.
GNU_ONLY := __attribute__|__builtin_|__asm|(^|[^_[:alnum:]])asm *\(|__thread|typeof|__extension__|\(\{|__label__|__int128|__inline__|__restrict__

.PHONY: windows-msvc-test msvc-view
msvc-view:
	@mkdir -p $(MSVC_B)
	$(MSVC_CC) -E -x c++ -U__GNUC__ -U__clang__ $(MSVC_CPPFLAGS) $(DEFS_asm) coroutine.cpp -o $(MSVC_B)/cl-view.ii
	@awk '/^# [0-9]+ "/ { own = $$3 == "\"coroutine.cpp\""; next } own' $(MSVC_B)/cl-view.ii > $(MSVC_B)/cl-view.own
	@if grep -n -E '$(GNU_ONLY)' $(MSVC_B)/cl-view.own; then \
		echo "coroutine.cpp as cl.exe sees it: the GNU-only spellings above"; exit 1; fi
	@echo "coroutine.cpp as cl.exe sees it: $$(wc -l < $(MSVC_B)/cl-view.own) lines, no GNU-only spelling"

# Every program links it (through LDFLAGS, so not among their prerequisites):
# a new one takes the programs linked against the old one away.
$(MSVC_B)/msvc_crt.o: test/platform/msvc_crt.c
	@mkdir -p $(@D)
	$(MSVC_CC) $(MSVC_CPPFLAGS) $(WARN) -O2 -c $< -o $@
	find $(MSVC_B) -name '*.exe' -delete

$(MSVC_B)/m.lib:
	@mkdir -p $(@D)
	llvm-ar rcs $@

windows-msvc-test: msvc-view $(MSVC_B)/msvc_crt.o $(MSVC_B)/m.lib $(WINEPREFIX_DIR)/system.reg
	@$(MAKE) --no-print-directory $(MSVC_VARS) B=$(MSVC_B)/masm SWITCH=asm_switch.asm $(MSVC_SPELLINGS) \
		TESTS="$(MSVC_TESTS) driver_dll dllmain" check check-outputs
	@$(MAKE) --no-print-directory $(MSVC_VARS) B=$(MSVC_B)/gas CPPFLAGS="$(CPPFLAGS) $(MSVC_CPPFLAGS)" \
		TESTS="$(MSVC_TESTS) driver_dll dllmain" check check-outputs
	test/platform/masm_twin_check.sh $(MSVC_B)/gas/asm/asm_switch.o $(MSVC_B)/masm/asm/asm_switch.o $(MSVC_B)/twin
	@$(MAKE) --no-print-directory $(MSVC_VARS) B=$(MSVC_B)/checked CPPFLAGS="$(CPPFLAGS) $(MSVC_CPPFLAGS)" CHECKED=1 \
		TESTS="$(MSVC_TESTS)" check check-checked-bugs

