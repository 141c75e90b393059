#!/bin/bash
# run.sh - C projects get the library the ways a user would, and their
# programs run correctly (`make consumer-test`; run from the source root).
#
# First `make dist` writes the release tarball of the working tree: README's
# recipes get it from there (its file:// address and hash standing for
# README's <releases> and <sha256>).  For each of static/shared x
# ucontext/asm (COMBOS):
#   - the library built on its own with CMake: ctest runs the suite, then
#     `cmake --install` into a scratch prefix;
#   - CMake consumers (test/consumers/*/CMakeLists.txt, `project(x C)`):
#     add_subdirectory, FetchContent of the tarball (README's lines), and
#     with the first combination FetchContent from a path (SOURCE_DIR) and
#     from a git repository (GIT_REPOSITORY, GIT_TAG), README's lines,
#     find_package after that install; each installs its programs into a
#     prefix of its own, where they must run: the first two with the
#     library installed with them when shared (COROUTINE_INSTALL=ON, as
#     README says), and with nothing of the library installed when static
#     (COROUTINE_INSTALL's default below another project), the third with
#     the library's prefix;
#   - a Meson project with the library as a subproject (README's wrap file
#     of the tarball), static by default, whose setup must report
#     coroutine.h's version, and whose installed programs must run;
#   - pkg-config against the CMake install.
# The consumers' install rules are README's lines, word for word.  The
# demo, as CMake and Meson build it (the library the project), prints the
# original's output and writes trace_page.html's page.  Then: make, CMake
# and Meson install the same coroutine.pc; README's pkg-config recipes
# against `make install` into a private prefix; the documents' lines for
# gdb's commands (a RelWithDebInfo build, the scripts where they say), with
# the library fetched, copied and installed; the suite under Ninja
# Multi-Config (`ctest -C Release`); CMake builds the
# shared library with clang; consumers cross-built through the shipped
# toolchain and cross files (CROSS: aarch64 under qemu-user, mingw under
# wine); for each backend, `make install-check`.
#
# Every consumer builds examples/generator.c, which must print
# examples/generator.expected, and version.c, which fails unless the
# version its build system reports is coroutine.h's.  No program may need
# the C++ runtime; a shared build must really load a libcoroutine.so, which
# must export coroutine_* only.  Builds stay in build/consumers, so that a
# second run rebuilds only what changed.
set -euo pipefail

root=$(pwd)
work=$root/build/consumers
consumers=$root/test/consumers
mkdir -p "$work"
log=$work/last.log

# step DESCRIPTION COMMAND...: runs COMMAND quietly, shows its output if it fails.
step() {
	local what=$1
	shift
	echo "== $what"
	if ! "$@" > "$log" 2>&1; then
		cat "$log"
		echo "consumer-test: FAILED: $what"
		exit 1
	fi
}

fail() {
	echo "consumer-test: FAILED: $*"
	exit 1
}

# check_programs DIR LINKAGE: DIR's generator and version programs, built
# against a LINKAGE (static or shared) library, do what they must.
check_programs() {
	local dir=$1 linkage=$2 program lib
	"$dir/generator" | diff -u examples/generator.expected - || fail "$dir/generator's output"
	"$dir/version" || fail "$dir/version"
	for program in generator version; do
		if readelf -d "$dir/$program" | grep NEEDED | grep -E 'libstdc\+\+|libc\+\+'; then
			fail "$dir/$program needs the C++ runtime"
		fi
	done
	lib=$(ldd "$dir/generator" | awk '$1 ~ /^libcoroutine\.so/ { print $3 }')
	case $linkage in
	shared) [ -n "$lib" ] || fail "$dir/generator does not load libcoroutine.so"
		"$consumers/check-shared.sh" "$lib" ;;
	static) [ -z "$lib" ] || fail "$dir/generator loads $lib, not the static library" ;;
	esac
}

# check_installed PREFIX LINKAGE [LIBDIR]: the programs installed in
# PREFIX/bin run without LD_LIBRARY_PATH, a shared build's loading, through
# their rpath, the libcoroutine.so.1 installed in LIBDIR (PREFIX/lib
# unless given), not the one in a build tree.
check_installed() {
	local prefix=$1 linkage=$2 libdir=${3:-$1/lib} lib
	env -u LD_LIBRARY_PATH "$prefix/bin/generator" | diff -u examples/generator.expected - ||
		fail "$prefix/bin/generator's output"
	env -u LD_LIBRARY_PATH "$prefix/bin/version" > /dev/null || fail "$prefix/bin/version"
	lib=$(env -u LD_LIBRARY_PATH ldd "$prefix/bin/generator" | awk '$1 ~ /^libcoroutine\.so/ { print $3 }')
	case $linkage in
	shared) [ -n "$lib" ] && [ "$(realpath "$lib")" = "$(realpath "$libdir/libcoroutine.so.1")" ] ||
			fail "installed, $prefix/bin/generator loads '$lib', not $libdir/libcoroutine.so.1" ;;
	static) [ -z "$lib" ] || fail "$prefix/bin/generator loads $lib, not the static library" ;;
	esac
}

# cmake_installed BUILD PREFIX LINKAGE [LIBDIR]: `cmake --install` of the
# consumer BUILD into PREFIX installs programs that run from there.
cmake_installed() {
	rm -rf "$2"
	step "  cmake --install $(basename "$1")" cmake --install "$1" --prefix "$2"
	check_installed "${@:2}"
}

# nothing_of_the_library PREFIX: a consumer's install into PREFIX holds
# its own programs only: no header, library, CMake package or coroutine.pc.
nothing_of_the_library() {
	local found
	found=$(find "$1" -name 'coroutine.h' -o -name 'libcoroutine*' -o -name 'coroutine.pc' \
		-o -name 'coroutine*Config*.cmake')
	[ -z "$found" ] || fail "the consumer's install into $1 installed the library's files: $found"
}

# check_demo DIR: the demo that CMake or Meson built in DIR prints the
# original's output, and its --trace=html page is trace_page.html's.
check_demo() {
	"$1/main" | diff -u examples/main.expected - || fail "$1/main's output"
	test/docs/trace_page_html.sh "$1/main" > /dev/null || fail "$1/main --trace=html"
}

# no_tests DIR: the library's build tree DIR, inside a consumer's, holds
# the library only: no test or example was built for the consumer.
no_tests() {
	[ -f "$1/CMakeFiles/coroutine.dir/coroutine.cpp.o" ] || fail "no library build in $1"
	[ ! -e "$1/test_api" ] && [ ! -e "$1/examples" ] || fail "tests or examples built in $1"
}

# The version coroutine.h defines, as 1.0.0.
version=$(sed -n 's/^#define COROUTINE_VERSION_[A-Z]* \([0-9]*\)$/\1/p' coroutine.h | paste -sd.)

# The release tarball of the working tree as it is, as a release would
# hold it: changes not committed yet included (git stash create makes a
# commit of them and touches nothing; nothing when there are none), files
# never added left out.  Fixed dates: the same tree gives the same commit,
# tarball and hash, so that a second run fetches and builds nothing new.
tree=$(GIT_AUTHOR_DATE=2000-01-01T00:00:00Z GIT_COMMITTER_DATE=2000-01-01T00:00:00Z \
	git -c user.name=consumer-test -c user.email=consumer-test@localhost stash create) ||
	fail "the release tarball is made with git: run this in a git checkout"
dist=$work/dist
step "make dist (of the working tree)" make --no-print-directory dist DIST_DIR="$dist" DIST_COMMIT="${tree:-HEAD}"
releases=file://$dist
sha256=$(cut -d' ' -f1 "$dist/coroutine-$version.tar.gz.sha256")

# readme BLOCK: README's block (test/docs/readme_block.sh), the tarball's
# address and hash in place of <releases> and <sha256>.
readme() {
	test/docs/readme_block.sh "$1" | sed -e "s|<releases>|$releases|g" -e "s|<sha256>|$sha256|g"
}

# readme_lines_in FILE BLOCK NAME: FILE holds README's BLOCK word for word,
# with NAME for README's prog: the consumers run README's lines.
readme_lines_in() {
	local lines
	lines=$(readme "$2") || fail "README's $2 lines"
	lines=${lines//prog/$3}
	[[ $(cat "$1") == *"$lines"* ]] || fail "$1 does not hold README's $2 lines (prog: $3):
$lines"
}
readme_lines_in "$consumers/programs.cmake" cmake-install-rpath "generator version"
readme_lines_in "$consumers/meson/meson.build" meson-install-rpath generator

# FetchContent_Declare as README has it.
readme cmake-fetchcontent > "$work/fetchcontent.cmake" || fail "README's cmake-fetchcontent lines"

# README's FetchContent recipes from a copy of the tree and from a git
# repository, word for word, in a project of their own each: the first
# finds the tarball's tree at third_party/coroutine, the second a git
# repository of it (a commit of the tarball's files, tagged v$version) at
# the address given for <git-address>, with <tag> standing for that tag.
fetch_project() { # NAME BLOCK: the project in $work/NAME/src, README's BLOCK in it
	local src=$work/$1/src
	mkdir -p "$src"
	readme "$2" | sed -e "s|<git-address>|file://$work/git/coroutine|g" -e "s|<tag>|v$version|g" \
		> "$work/$1/fetch.cmake" || fail "README's $2 lines"
	sed -e "s|\${COROUTINE_FETCH}|$work/$1/fetch.cmake|" -e "s|\.\./programs\.cmake|$consumers/programs.cmake|" \
		"$consumers/fetchcontent/CMakeLists.txt" > "$src/CMakeLists.txt"
}
unpacked=$work/unpacked
if [ ! -f "$unpacked/.tarball" ] || ! cmp -s "$unpacked/.tarball" "$dist/coroutine-$version.tar.gz.sha256"; then
	rm -rf "$unpacked" "$work/git" "$work/fetch-path" "$work/fetch-git"
	mkdir -p "$unpacked" "$work/git"
	tar xzf "$dist/coroutine-$version.tar.gz" -C "$unpacked"
	cp "$dist/coroutine-$version.tar.gz.sha256" "$unpacked/.tarball"
	cp -R "$unpacked/coroutine-$version" "$work/git/coroutine"
	(cd "$work/git/coroutine" && git init -q && git add -A &&
		git -c user.name=consumer-test -c user.email=consumer-test@localhost commit -q -m "coroutine $version" &&
		git tag "v$version") || fail "a git repository of the tarball's files"
fi
fetch_project fetch-path cmake-fetchcontent-path
mkdir -p "$work/fetch-path/src/third_party"
ln -sfn "$unpacked/coroutine-$version" "$work/fetch-path/src/third_party/coroutine"
fetch_project fetch-git cmake-fetchcontent-git

# The Meson project in $meson, staged with its programs and README's wrap
# file; another wrap file (another tarball) starts it afresh.
meson=$work/meson
meson_src=$meson/src
readme meson-wrap > "$work/coroutine.wrap" || fail "README's meson-wrap lines"
if ! cmp -s "$work/coroutine.wrap" "$meson_src/subprojects/coroutine.wrap"; then
	rm -rf "$meson"
	mkdir -p "$meson_src/subprojects"
	cp "$work/coroutine.wrap" "$meson_src/subprojects/coroutine.wrap"
fi
cp "$consumers/meson/meson.build" examples/generator.c "$consumers/version.c" "$meson_src/"

# cmake_project SOURCE BUILD [OPTION...]: configures and builds.
cmake_project() {
	local source=$1 build=$2
	shift 2
	cmake -S "$source" -B "$build" -G Ninja "$@" && cmake --build "$build" -j2
}

# cmake_suite BUILD [OPTION...]: the library on its own, and ctest.
cmake_suite() {
	local build=$1
	shift
	cmake_project . "$build" "$@" && (cd "$build" && ctest --output-on-failure)
}

# meson_project SOURCE BUILD [OPTION...]: sets up once, then builds (which
# sets up again when a meson.build changed).  The setup must report the
# subproject's version, coroutine.h's.
# --force-fallback-for: the subproject even where coroutine is installed.
meson_project() {
	local source=$1 build=$2
	shift 2
	if [ ! -f "$build/build.ninja" ]; then
		rm -rf "$build"
		meson setup "$build" "$source" --force-fallback-for=coroutine "$@" || return 1
	fi
	ninja -C "$build" || return 1
	grep -A1 '^Project name: coroutine$' "$build/meson-logs/meson-log.txt" |
		grep -x "Project version: $version" > /dev/null || { echo "meson setup did not report version $version"; return 1; }
}

# pkg_config_programs PREFIX DIR: the programs built by cc alone, with the
# flags pkg-config gives for the coroutine.pc installed under PREFIX.
pkg_config_programs() {
	local prefix=$1 dir=$2 cflags libdir version
	pc() { PKG_CONFIG_LIBDIR=$(echo "$prefix"/lib*/pkgconfig) pkg-config "$@" coroutine; }
	cflags=$(pc --cflags --libs) && libdir=$(pc --variable=libdir) && version=$(pc --modversion) || return 1
	mkdir -p "$dir"
	cc examples/generator.c $cflags -Wl,-rpath,"$libdir" -o "$dir/generator" &&
	cc "$consumers/version.c" $cflags -Wl,-rpath,"$libdir" "-DEXPECTED_VERSION=\"$version\"" \
		-o "$dir/version"
}

# same_pc: make and CMake install the same coroutine.pc for the same
# prefix; Meson's differs only in its libdir (Debian's multiarch one), and
# in its prefix, the one its build was set up with.
same_pc() {
	local dir=$work/pc make_pc meson_prefix=$meson/installed-static-ucontext
	rm -rf "$dir"
	make --no-print-directory install DESTDIR="$dir/make" PREFIX=/usr/local &&
	DESTDIR="$dir/cmake" cmake --install "$work/lib-static-ucontext" --prefix /usr/local &&
	meson install -C "$meson/static-ucontext" --destdir "$dir/meson" --no-rebuild || return 1
	make_pc=$dir/make/usr/local/lib/pkgconfig/coroutine.pc
	diff -u "$make_pc" "$dir/cmake/usr/local/lib/pkgconfig/coroutine.pc" &&
	diff -u <(grep -v '^libdir=' "$make_pc") <(grep -v '^libdir=' "$(find "$dir/meson" -name coroutine.pc)" |
		sed "s|^prefix=$meson_prefix\$|prefix=/usr/local|")
}

# COMBOS="static-asm" (say) runs only that combination, COMBOS= none.
combos=${COMBOS-static-ucontext static-asm shared-ucontext shared-asm}
for combo in $combos; do
	linkage=${combo%-*} backend=${combo#*-}
	on=$([ "$linkage" = shared ] && echo ON || echo OFF)
	asm=$([ "$backend" = asm ] && echo ON || echo OFF)
	options=(-DBUILD_SHARED_LIBS=$on -DCOROUTINE_ASM=$asm)
	prefix=$work/prefix-$combo
	# Below a consumer: the library's install rules when its programs need
	# the shared library installed beside them, else the default (-U: not
	# what an earlier run left in the cache).
	if [ "$linkage" = shared ]; then below=(-DCOROUTINE_INSTALL=ON); else below=(-UCOROUTINE_INSTALL); fi

	step "$combo: CMake, the library on its own, ctest" cmake_suite "$work/lib-$combo" "${options[@]}"
	check_demo "$work/lib-$combo"
	rm -rf "$prefix"
	step "$combo: cmake --install" cmake --install "$work/lib-$combo" --prefix "$prefix"

	step "$combo: CMake add_subdirectory" cmake_project "$consumers/add_subdirectory" \
		"$work/add_subdirectory-$combo" "${options[@]}" "${below[@]}" -DCOROUTINE_SOURCE_DIR="$root"
	check_programs "$work/add_subdirectory-$combo" $linkage
	no_tests "$work/add_subdirectory-$combo/coroutine"
	cmake_installed "$work/add_subdirectory-$combo" "$work/installed-add_subdirectory-$combo" $linkage
	[ "$linkage" = shared ] || nothing_of_the_library "$work/installed-add_subdirectory-$combo"

	step "$combo: CMake FetchContent of the release tarball" cmake_project "$consumers/fetchcontent" \
		"$work/fetchcontent-$combo" "${options[@]}" "${below[@]}" -DCOROUTINE_FETCH="$work/fetchcontent.cmake"
	! grep -B2 -A8 'CMake Warning' "$log" || fail "README's FetchContent lines: CMake warns"
	check_programs "$work/fetchcontent-$combo" $linkage
	no_tests "$work/fetchcontent-$combo/_deps/coroutine-build"
	cmake_installed "$work/fetchcontent-$combo" "$work/installed-fetchcontent-$combo" $linkage
	[ "$linkage" = shared ] || nothing_of_the_library "$work/installed-fetchcontent-$combo"

	# README's other two FetchContent recipes, with the first combination:
	# how the tree is fetched is all that differs from the tarball's.
	if [ "$combo" = "${combos%% *}" ]; then
		for fetch in path git; do
			step "$combo: CMake FetchContent from a $fetch" cmake_project "$work/fetch-$fetch/src" \
				"$work/fetch-$fetch/build-$combo" "${options[@]}" "${below[@]}"
			! grep -B2 -A8 'CMake Warning' "$log" || fail "README's FetchContent lines ($fetch): CMake warns"
			check_programs "$work/fetch-$fetch/build-$combo" $linkage
			no_tests "$work/fetch-$fetch/build-$combo/_deps/coroutine-build"
		done
	fi

	# Installed into another prefix than the library's.
	step "$combo: CMake find_package" cmake_project "$consumers/find_package" \
		"$work/find_package-$combo" -DCMAKE_PREFIX_PATH="$prefix"
	check_programs "$work/find_package-$combo" $linkage
	cmake_installed "$work/find_package-$combo" "$work/installed-find_package-$combo" $linkage "$prefix/lib"

	# Static unless asked for the subproject: the default is what is tested.
	meson_options=(-Dcoroutine:asm=$([ $asm = ON ] && echo true || echo false))
	[ "$linkage" = static ] || meson_options+=(-Dcoroutine:default_library=shared)
	step "$combo: Meson subproject" meson_project "$meson_src" "$meson/$combo" \
		--prefix "$meson/installed-$combo" "${meson_options[@]}"
	check_programs "$meson/$combo" $linkage
	rm -rf "$meson/installed-$combo"
	step "  meson install" meson install -C "$meson/$combo" --no-rebuild
	check_installed "$meson/installed-$combo" $linkage \
		"$(dirname "$(find "$meson/installed-$combo" -name 'libcoroutine.so.1' -print -quit)")"

	step "$combo: pkg-config" pkg_config_programs "$prefix" "$work/pkg-config-$combo"
	check_programs "$work/pkg-config-$combo" $linkage
done

# Meson builds the demo when the library is the project, not a subproject.
step "Meson, the library on its own: the demo" meson_project . "$work/meson-demo"
check_demo "$work/meson-demo"

if [[ " $combos " == *" static-ucontext "* ]]; then
	step "make, CMake and Meson install the same coroutine.pc" same_pc
fi

# README's recipes for a private prefix, word for word: the program linked
# with the shared library finds it through its rpath, the other is linked
# with the static library; neither needs LD_LIBRARY_PATH.
private_prefix() {
	local dir=$work/private
	rm -rf "$dir"
	make --no-print-directory install PREFIX="$dir/opt" || return 1
	(
		cd "$dir" && unset LD_LIBRARY_PATH && cp "$root/examples/generator.c" prog.c &&
		export PKG_CONFIG_PATH=$dir/opt/lib/pkgconfig &&
		cc prog.c $(pkg-config --cflags --libs coroutine) -Wl,-rpath,$(pkg-config --variable=libdir coroutine) -o prog &&
		cc prog.c $(pkg-config --cflags coroutine) $(pkg-config --variable=libdir coroutine)/libcoroutine.a -o prog-static &&
		ldd prog | grep "libcoroutine\.so\.1 => $dir/opt/lib/libcoroutine\.so\.1" &&
		! ldd prog-static | grep libcoroutine &&
		./prog | diff -u "$root/examples/generator.expected" - &&
		./prog-static | diff -u "$root/examples/generator.expected" -
	)
}
step "make install into a private prefix: README's pkg-config recipes" private_prefix

# The documents' lines for gdb's commands, word for word, from scratch,
# with the generator for prog: cmake-gdb in a project that fetches the
# library (README's git recipe); its two lines that build, then
# cmake-gdb-tree, in a project with a copy of the tree at
# third_party/coroutine (README's path recipe); cmake-install in a copy of
# the tree, into <prefix>, then the two lines (with -S the find_package
# project and its prefix) and cmake-gdb-installed.  Stopped in
# coroutine_yield, gdb's `info coroutines`, with the script where the
# lines say it is, must list the generator's schedule: it lists none
# without the library's debug information.
gdb_dir=$work/gdb
lines() { # BLOCK: its lines, with <prefix>, prog and gdb's commands
	readme "$1" | sed -e "s|<prefix>|$gdb_dir/prefix|g" -e "s|/usr/local\$|$gdb_dir/prefix|" \
		-e "s|build/prog\$|build/generator -batch -ex 'break coroutine_yield' -ex run -ex 'info coroutines'|"
}
build_lines() { lines cmake-gdb | sed '$d'; } # the two lines that configure and build
run_lines() { # DIR: the lines on stdin, run in DIR (build/ made afresh)
	cat > "$gdb_dir/lines.sh" && rm -rf "$1/build" &&
	(cd "$1" && bash -e "$gdb_dir/lines.sh") > "$gdb_dir/out" 2>&1 || { cat "$gdb_dir/out"; return 1; }
}
lists_schedule() {
	grep -q '^schedule 0x[0-9a-f]*: 2 coroutines' "$gdb_dir/out" ||
		{ cat "$gdb_dir/out"; echo "gdb's info coroutines lists no schedule"; return 1; }
}
gdb_fetched() { lines cmake-gdb | run_lines "$work/fetch-git/src" && lists_schedule; }
gdb_tree() { { build_lines && lines cmake-gdb-tree; } | run_lines "$work/fetch-path/src" && lists_schedule; }
gdb_installed() {
	rm -rf "$gdb_dir/coroutine" "$gdb_dir/prefix" && mkdir -p "$gdb_dir/find_package" &&
	cp -R "$unpacked/coroutine-$version" "$gdb_dir/coroutine" &&
	lines cmake-install | run_lines "$gdb_dir/coroutine" &&
	{ build_lines | sed "s|-S \. |-S $consumers/find_package -DCMAKE_PREFIX_PATH=$gdb_dir/prefix |" &&
		lines cmake-gdb-installed; } | run_lines "$gdb_dir/find_package" && lists_schedule
}
if command -v gdb > /dev/null; then
	mkdir -p "$gdb_dir"
	step "CMake, RelWithDebInfo: gdb's commands where the documents say (FetchContent from git)" gdb_fetched
	step "CMake, RelWithDebInfo: gdb's commands where the documents say (a copy of the tree)" gdb_tree
	step "CMake, RelWithDebInfo: gdb's commands where the documents say (installed)" gdb_installed
else
	echo "consumer-test: gdb's commands not tried: no gdb (apt-get install gdb)"
fi

# The suite under a multi-config generator, where each configuration's
# programs live in a directory of their own.
multi_config_suite() {
	local build=$work/lib-multi-config
	cmake -S . -B "$build" -G "Ninja Multi-Config" && cmake --build "$build" --config Release -j2 &&
	(cd "$build" && ctest -C Release --output-on-failure)
}
step "Ninja Multi-Config: CMake, the library on its own, ctest -C Release" multi_config_suite

# Debian's gcc links --as-needed, which hides a shared library linked with
# a C++ runtime it does not use; clang does not hide it.
CC=clang CXX=clang++ step "shared, clang: CMake, the library on its own, ctest" \
	cmake_suite "$work/lib-shared-clang" -DBUILD_SHARED_LIBS=ON
"$consumers/check-shared.sh" "$work/lib-shared-clang/libcoroutine.so"

# ---- Cross builds through cmake/toolchains/ and meson/cross/ ----------------

# run_cross RUNNER DIR EXE: DIR's generator and version, run by RUNNER
# (qemu-aarch64 -L ..., or wine), do what they must (CRLFs dropped).
run_cross() {
	local runner=$1 dir=$2 exe=$3
	$runner "$dir/generator$exe" | tr -d '\r' | diff -u examples/generator.expected - ||
		fail "$dir/generator$exe's output"
	$runner "$dir/version$exe" > /dev/null || fail "$dir/version$exe"
}

# mingw_dlls DIR: DIR's programs and DLLs need no DLL of MinGW's, only
# Windows's and libcoroutine.dll.
mingw_dlls() {
	local f needs
	for f in "$1"/*.exe "$1"/*.dll; do
		[ -e "$f" ] || continue
		needs=$(x86_64-w64-mingw32-objdump -p "$f" | sed -n 's/.*DLL Name: //p' |
			grep -viE '^(kernel32|msvcrt|ucrtbase|libcoroutine)\.dll$|^api-ms-win-' || true)
		[ -z "$needs" ] || fail "$f needs $needs"
	done
}

for target in ${CROSS-aarch64 mingw}; do
	case $target in
	aarch64)
		toolchain=$root/cmake/toolchains/aarch64-linux-gnu.cmake
		cross_file=$root/meson/cross/aarch64-linux-gnu.ini
		runner="qemu-aarch64 -L /usr/aarch64-linux-gnu" exe= ;;
	mingw)
		toolchain=$root/cmake/toolchains/x86_64-w64-mingw32.cmake
		cross_file=$root/meson/cross/x86_64-w64-mingw32.ini
		export WINEPREFIX=$work/wineprefix WINEDEBUG=-all
		if [ ! -f "$WINEPREFIX/system.reg" ]; then
			mkdir -p "$WINEPREFIX"
			step "mingw: wine prefix" wine wineboot --init
		fi
		runner=wine exe=.exe ;;
	esac
	step "$target: CMake, the library on its own through $(basename "$toolchain")" \
		cmake_project . "$work/cross-$target-lib" -DCMAKE_TOOLCHAIN_FILE="$toolchain"
	for linkage in static shared; do
		build=$work/cross-$target-$linkage
		on=$([ "$linkage" = shared ] && echo ON || echo OFF)
		step "$target, $linkage: CMake add_subdirectory through $(basename "$toolchain")" \
			cmake_project "$consumers/add_subdirectory" "$build" -DCMAKE_TOOLCHAIN_FILE="$toolchain" \
			-DBUILD_SHARED_LIBS=$on -DCOROUTINE_INSTALL=$on -DCOROUTINE_SOURCE_DIR="$root"
		# Installed, a Windows program finds the DLL beside it in bin/.
		rm -rf "$build-installed"
		step "  cmake --install" cmake --install "$build" --prefix "$build-installed"
		run_cross "$runner" "$build-installed/bin" "$exe"
		[ "$target" != mingw ] || mingw_dlls "$build-installed/bin"
	done
	step "$target: Meson subproject through $(basename "$cross_file")" meson_project "$meson_src" \
		"$meson/cross-$target" --cross-file "$cross_file"
	run_cross "$runner" "$meson/cross-$target" "$exe"
	[ "$target" != mingw ] || mingw_dlls "$meson/cross-$target"
done

# ucontext last: it is the backend a plain `make` selects.
for backend in asm ucontext; do
	step "$backend: make install-check (static and shared)" make --no-print-directory BACKEND=$backend install-check
done
echo "consumer-test: OK"
