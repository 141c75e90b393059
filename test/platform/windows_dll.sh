#!/bin/bash
# windows_dll.sh - with MinGW-w64, libcoroutine.dll and the programs built
# with the library need no DLL of MinGW's (libgcc_s_seh-1.dll,
# libstdc++-6.dll, libwinpthread-1.dll): only Windows' own
# (`make windows-dll-test`, run from the source root).
#
#     test/platform/windows_dll.sh MINGW-PREFIX BUILD-DIR WINE-COMMAND...
#
# With the MinGW compilers, CMake and Meson build the generator example
# against libcoroutine.dll, and Meson against the static library too (it
# links the program through g++, which would pick the shared libgcc; CMake
# links a C program with a static library through gcc, which does not).  The DLL
# and the program may import only the DLLs of the allowlist below (the
# program also the library's DLL), and the program, copied into an empty
# folder with the DLL alone, runs under wine with no WINEPATH and prints
# examples/generator.expected.  The DLL exports coroutine.h's functions
# only, which the shared builds' program calls through dllimport and the
# static build's directly.  Builds stay in BUILD-DIR, so that a second
# run rebuilds only what changed.
set -euo pipefail

mingw=$1
work=$2
shift 2
wine_run=("$@")
root=$(pwd)
mkdir -p "$work"
work=$(cd "$work" && pwd)
log=$work/last.log

# Windows' own DLLs: the kernel's, the C runtimes (msvcrt, the UCRT and its
# api-ms-win-crt-* forwarders), and the system's other libraries CMake links.
WINDOWS_DLLS='^(kernel32|ntdll|msvcrt|ucrtbase|api-ms-win-crt-[a-z0-9-]+|user32|gdi32|advapi32|shell32|ole32|oleaut32)\.dll$'

fail() {
	echo "windows-dll-test: FAILED: $*"
	exit 1
}

# step DESCRIPTION COMMAND...: runs COMMAND quietly, shows its output if it fails.
step() {
	local what=$1
	shift
	echo "== $what"
	"$@" > "$log" 2>&1 || { cat "$log"; fail "$what"; }
}

# imports FILE: the DLLs that FILE imports, one a line.
imports() {
	"${mingw}objdump" -p "$1" | sed -n 's/^[[:space:]]*DLL Name: //p'
}

# imports_only_windows FILE [ALSO]: FILE imports no DLL but Windows' own
# (and ALSO, a regex of further names).
imports_only_windows() {
	local others
	others=$(imports "$1" | grep -viE "$WINDOWS_DLLS" | grep -vE "${2:-^$}" || true)
	[ -z "$others" ] || fail "$1 imports $(echo $others), not only Windows' own DLLs"
}

# runs_alone PROGRAM [DLL]: PROGRAM, in a folder of its own with DLL
# beside it, prints what the generator must print.
runs_alone() {
	local program=$1 dll=${2:-} alone
	alone=$(dirname "$program")/alone
	rm -rf "$alone"
	mkdir -p "$alone"
	cp "$program" ${dll:+"$dll"} "$alone/"
	env -u WINEPATH "${wine_run[@]}" "$alone/$(basename "$program")" | tr -d '\r' \
		| diff -u "$root/examples/generator.expected" - || fail "$program (with only ${dll:-no DLL} beside it)"
}

# exports_the_api DLL: DLL exports the functions coroutine.h marks
# COROUTINE_API and nothing else (it was built with COROUTINE_BUILD_DLL:
# without a dllexport, MinGW's ld would export every global symbol).
exports_the_api() {
	diff -u <(sed -n 's/^COROUTINE_API .*\(coroutine_[a-z_]*\)(.*/\1/p' "$root/coroutine.h" | sort) \
		<("${mingw}objdump" -p "$1" | sed -n '/^\[Ordinal\/Name Pointer\] Table/,/^$/s/^[[:space:]]*\[ *[0-9]*\] //p' | sort) \
		|| fail "$1 exports other functions than coroutine.h's"
}

# calls_through_imports OBJECT yes|no: OBJECT calls the library through
# __imp_coroutine_* (dllimport, COROUTINE_DLL), or not at all (static).
calls_through_imports() {
	local found=no
	"${mingw}nm" "$1" | grep ' __imp_coroutine_open$' >/dev/null && found=yes
	[ $found = "$2" ] || fail "$1: calls coroutine_open through dllimport: $found, should: $2"
}

# check LINKAGE PROGRAM DLL-PATTERN: the checks of one build.
check() {
	local linkage=$1 program=$2 dll object
	dll=$(find "$(dirname "$program")" -name "$3" ! -path "*/alone/*" -print -quit)
	object=$(find "$(dirname "$program")" -name 'generator.c.o*' -print -quit)
	[ -n "$object" ] || fail "no object of generator.c beside $program"
	case $linkage in
	shared) [ -n "$dll" ] || fail "no $3 built beside $program"
		imports_only_windows "$dll"
		exports_the_api "$dll"
		calls_through_imports "$object" yes
		imports_only_windows "$program" "^$(basename "$dll")\$"
		[ "$(imports "$program" | grep -cxF "$(basename "$dll")")" = 1 ] \
			|| fail "$program does not load $(basename "$dll")" ;;
	static) imports_only_windows "$program"
		calls_through_imports "$object" no ;;
	esac
	runs_alone "$program" ${dll:+"$dll"}
}

# ---- CMake: the add_subdirectory consumer of test/consumers --------------
build=$work/cmake-shared
step "CMake, shared" cmake -S test/consumers/add_subdirectory -B "$build" -G Ninja \
	-DCOROUTINE_SOURCE_DIR="$root" -DBUILD_SHARED_LIBS=ON -DCMAKE_SYSTEM_NAME=Windows \
	-DCMAKE_C_COMPILER="${mingw}gcc" -DCMAKE_CXX_COMPILER="${mingw}g++" \
	-DCMAKE_RC_COMPILER="${mingw}windres" -DCMAKE_BUILD_TYPE=Release
step "CMake, shared: build" cmake --build "$build" -j2
check shared "$build/generator.exe" "libcoroutine*.dll"

# ---- Meson: the consumer of test/consumers with the library as subproject -
cross=$work/mingw.ini
cat > "$cross" <<EOF
[binaries]
c = '${mingw}gcc'
cpp = '${mingw}g++'
ar = '${mingw}ar'
strip = '${mingw}strip'
windres = '${mingw}windres'

[host_machine]
system = 'windows'
cpu_family = 'x86_64'
cpu = 'x86_64'
endian = 'little'
EOF
src=$work/meson-src
mkdir -p "$src/subprojects"
cp test/consumers/meson/meson.build examples/generator.c test/consumers/version.c "$src/"
ln -sfn "$root" "$src/subprojects/coroutine"
for linkage in shared static; do
	build=$work/meson-$linkage
	if [ ! -f "$build/build.ninja" ]; then
		rm -rf "$build"
		step "Meson, $linkage" meson setup --cross-file "$cross" -Dcoroutine:default_library=$linkage \
			--buildtype=release "$build" "$src"
	fi
	step "Meson, $linkage: build" ninja -C "$build"
	check $linkage "$build/generator.exe" "libcoroutine*.dll"
done
echo "windows-dll-test: OK"
