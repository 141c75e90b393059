#!/bin/sh
# Usage: macos_check.sh ASM_FILE OUT_DIR APPLE_TARGET ELF_TARGET
# Assembles ASM_FILE as Mach-O for APPLE_TARGET and as ELF for ELF_TARGET
# (the same architecture) with clang, and succeeds only if the Mach-O object
# has the same entry points at the same offsets (with the leading underscore
# of C names, and private external: hidden) and the same instruction stream.
# macOS cannot run here; this proves the format layer changes nothing else.
asm=$1 dir=$2 apple=$3 elf=$4
mkdir -p "$dir"
macho=$dir/$apple.o elfo=$dir/$elf.o
clang -target "$apple" -c "$asm" -o "$macho" || exit 1
clang -target "$elf" -c "$asm" -o "$elfo" || exit 1

# Entry points: "offset type name"; a Mach-O name is the C name with an
# underscore in front.
llvm-nm --extern-only --defined-only "$elfo" | sed 's/ \([^ ]*\)$/ _\1/' > "$dir/$elf.entries"
llvm-nm --extern-only --defined-only "$macho" > "$dir/$apple.entries"
if [ ! -s "$dir/$elf.entries" ] || ! cmp -s "$dir/$elf.entries" "$dir/$apple.entries"; then
	echo "FAIL: $apple: entry points differ from $elf:" >&2
	diff "$dir/$elf.entries" "$dir/$apple.entries" >&2
	exit 1
fi
if llvm-nm -m --extern-only --defined-only "$macho" | grep -v "private external"; then
	echo "FAIL: $apple: the entry points above are exported, not private external" >&2
	exit 1
fi

# Instructions without addresses, symbol names or the disassembler's
# comments: what is left must be the same.
instructions() {
	llvm-objdump -d --no-show-raw-insn --no-leading-addr "$1" |
		grep -v -e 'file format' -e '^Disassembly of section' -e '^<.*>:$' |
		sed -e 's/ <[^>]*>//' -e 's/[[:space:]]*#* imm = .*$//'
}
instructions "$elfo" > "$dir/$elf.s"
instructions "$macho" > "$dir/$apple.s"
if ! grep -q '[a-z]' "$dir/$elf.s" || ! cmp -s "$dir/$elf.s" "$dir/$apple.s"; then
	echo "FAIL: $apple: instructions differ from $elf:" >&2
	diff "$dir/$elf.s" "$dir/$apple.s" >&2
	exit 1
fi
# Apple reserves x18 (the platform register) on arm64.
if grep -w -e x18 -e w18 "$dir/$apple.s"; then
	echo "FAIL: $apple: the instructions above touch x18" >&2
	exit 1
fi
echo "ok: $apple: $(wc -l < "$dir/$apple.entries") entry points and $(grep -c . "$dir/$apple.s") instructions as $elf"
