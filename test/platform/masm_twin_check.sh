#!/bin/sh
# Usage: masm_twin_check.sh GAS_OBJECT MASM_OBJECT OUT_DIR
# asm_switch.asm is the Windows x64 section of asm_switch.S in Microsoft's
# syntax.  Given the two assembled for x86_64-pc-windows-msvc (clang for
# the .S, llvm-ml for the .asm), succeeds only if they hold the same
# instruction stream at the same offsets and the same unwind codes: the
# twins have not drifted, in the paths no test runs too.
gas=$1 masm=$2 dir=$3
mkdir -p "$dir"

# Instructions without addresses, symbol names or the disassembler's
# comments (asm_switch.asm's second procedure, where asm_switch.S opens
# its .seh_proc, is only a label in between).
instructions() {
	llvm-objdump -d --no-show-raw-insn --no-leading-addr "$1" |
		grep -v -e 'file format' -e '^Disassembly of section' -e '^<.*>:$' -e '^$' |
		sed -e 's/ <[^>]*>//' -e 's/[[:space:]]*#* imm = .*$//'
}
# The unwind codes of each function that has them, without its addresses.
unwind_codes() {
	llvm-readobj --unwind "$1" |
		grep -E 'PrologSize|FrameRegister|FrameOffset|UnwindCodeCount|0x[0-9A-F]+: '
}
instructions "$gas" > "$dir/gas.s"
instructions "$masm" > "$dir/masm.s"
if ! grep -q '[a-z]' "$dir/gas.s" || ! cmp -s "$dir/gas.s" "$dir/masm.s"; then
	echo "FAIL: asm_switch.asm's instructions differ from asm_switch.S's (< .S, > .asm):" >&2
	diff "$dir/gas.s" "$dir/masm.s" >&2
	exit 1
fi
unwind_codes "$gas" > "$dir/gas.unwind"
unwind_codes "$masm" > "$dir/masm.unwind"
if ! grep -q ALLOC "$dir/gas.unwind" || ! cmp -s "$dir/gas.unwind" "$dir/masm.unwind"; then
	echo "FAIL: asm_switch.asm's unwind codes differ from asm_switch.S's (< .S, > .asm):" >&2
	diff "$dir/gas.unwind" "$dir/masm.unwind" >&2
	exit 1
fi
echo "asm_switch.asm and asm_switch.S: the same $(wc -l < "$dir/gas.s") instructions, the same unwind codes"
