# coroutine_lldb.py - lldb commands that show where suspended coroutines wait:
# the twin of coroutine-gdb.py (read that one first), for lldb users.
#
#   (lldb) command script import debug/coroutine_lldb.py
#   (lldb) coroutine info                           every open schedule and its coroutines
#   (lldb) coroutine bt [SCHEDULE] ID [full|N]      a coroutine's whole backtrace
#   (lldb) coroutine apply [SCHEDULE] ID COMMAND    any command, among its frames
#
# (lldb imports no module with a dash in its name: hence the underscore.)
# lldb has no `info` prefix: gdb's `info coroutines` is `coroutine info`.
# As in gdb: the slice put back on the run stack and the saved registers
# loaded into the selected thread, the command run, everything put back.
# Live processes only: lldb writes neither memory nor registers into a
# core file, and this script makes no patched copy of one (gdb's does).

import os
import shlex
import struct

import lldb

LIBRARY_FUNCTIONS = ("coroutine_yield", "coroutine_try_yield", "coroutine_switch_context",
                     "coroutine_start_context", "swapcontext", "getcontext", "setcontext")
READY = 1

# The same tables as coroutine-gdb.py's.
ASM_WORDS = {
    "x86_64": [("rbx", 0), ("rbp", 1), ("r12", 2), ("r13", 3), ("r14", 4), ("r15", 5),
               ("rsp", 6), ("rip", 7)],
    "aarch64": [("x%d" % (19 + i), i) for i in range(12)] + [("sp", 20), ("pc", 11)],
}
UCONTEXT_GREGS = {"x86_64": [("rbx", 11), ("rbp", 10), ("r12", 4), ("r13", 5), ("r14", 6), ("r15", 7),
                             ("rsp", 15), ("rip", 16)]}


class Refusal(Exception):
    """One line for the user; nothing was changed."""


def u(value):
    return value.GetValueAsUnsigned()


class Library:
    def __init__(self, view):
        self.view = view
        self.file = view.GetDeclaration().GetFileSpec().GetFilename()
        backend = view.GetChildMemberWithName("backend")
        self.backend = bytes(backend.GetData().uint8s).split(b"\0")[0].decode()
        self.coroutine_size = u(view.GetChildMemberWithName("coroutine_size"))
        self.shallow_slice = u(view.GetChildMemberWithName("shallow_slice"))
        self.slice_align = u(view.GetChildMemberWithName("slice_align"))
        self.suspended_elsewhere = u(view.GetChildMemberWithName("suspended_elsewhere"))
        self.empty = u(view.GetChildMemberWithName("empty"))

    def schedules(self):
        S = self.view.GetChildMemberWithName("open").Dereference()
        seen = set()
        while u(S) != 0 and u(S) not in seen:
            seen.add(u(S))
            yield S
            S = S.GetChildMemberWithName("next_open")

    def owns_frame(self, frame):
        if frame.GetFunctionName() in LIBRARY_FUNCTIONS:
            return True
        spec = frame.GetLineEntry().GetFileSpec()
        return spec.IsValid() and spec.GetFilename() == self.file


def field(value, name):
    return value.GetChildMemberWithName(name)


def libraries(target):
    views = target.FindGlobalVariables("coroutine_debugger_view", 16)
    if views.GetSize() == 0:
        if target.FindSymbols("coroutine_debugger_view").GetSize():
            raise Refusal("the coroutine library has no debug information: build coroutine.cpp with -g")
        if target.FindFunctions("coroutine_open").GetSize():
            raise Refusal("this coroutine library has no debugger's hook (coroutine_debugger_view): "
                          "use a newer coroutine.cpp")
        raise Refusal("no coroutine library in this program (no coroutine_debugger_view)")
    return [Library(views.GetValueAtIndex(i)) for i in range(views.GetSize())]


def is_made(S):
    return u(field(S, "stack")) != 0


def split_schedule(target, words):
    schedules = [(lib, S) for lib in libraries(target) for S in lib.schedules()]
    if words:
        first = target.EvaluateExpression(words[0])
        if first.GetError().Success() and first.GetType().GetPointeeType().GetName() in ("schedule", "struct schedule"):
            for lib, S in schedules:
                if u(S) == u(first):
                    return lib, S, words[1:]
            raise Refusal("%s (0x%x) is not an open schedule" % (words[0], u(first)))
        if first.GetError().Success() and not first.GetType().GetBasicType() in INTEGER_TYPES:
            raise Refusal("%s is a %s, not a struct schedule * nor an id" % (words[0], first.GetType().GetName()))
    made = [(lib, S) for lib, S in schedules if is_made(S)]
    if not made:
        raise Refusal("no schedule is open")
    if len(made) > 1:
        raise Refusal("%d schedules are open: name one first, e.g. coroutine bt 0x%x ID" % (len(made), u(made[0][1])))
    return made[0][0], made[0][1], words


INTEGER_TYPES = (lldb.eBasicTypeInt, lldb.eBasicTypeUnsignedInt, lldb.eBasicTypeLong, lldb.eBasicTypeUnsignedLong,
                 lldb.eBasicTypeLongLong, lldb.eBasicTypeUnsignedLongLong, lldb.eBasicTypeShort,
                 lldb.eBasicTypeUnsignedShort, lldb.eBasicTypeChar, lldb.eBasicTypeSignedChar,
                 lldb.eBasicTypeUnsignedChar, lldb.eBasicTypeBool)


def find_coroutine(target, lib, S, word):
    if word is None:
        raise Refusal("which coroutine? give its id")
    try:
        id = int(word, 0)
    except ValueError:
        raise Refusal("%s is not a coroutine id" % word)
    if not is_made(S):
        raise Refusal("schedule 0x%x is still being opened" % u(S))
    cap = int(field(S, "cap").GetValueAsSigned())
    if not 0 <= id < cap:
        raise Refusal("coroutine %d is out of range: schedule 0x%x has ids [0, %d)" % (id, u(S), cap))
    C = field(S, "co").GetChildAtIndex(id, lldb.eNoDynamicValues, True)
    if u(C) == lib.empty:
        raise Refusal("coroutine %d: the slot is empty (no coroutine)" % id)
    return id, C


def arch(target):
    triple = target.GetTriple()
    if triple.startswith("x86_64"):
        return "x86_64"
    if triple.startswith("aarch64") or triple.startswith("arm64"):
        return "aarch64"
    raise Refusal("coroutine commands know x86_64 and aarch64, not %s" % triple)


def read(process, address, size):
    error = lldb.SBError()
    data = process.ReadMemory(address, size, error)
    if not error.Success():
        raise Refusal("cannot read 0x%x: %s" % (address, error.GetCString()))
    return data


def saved_registers(target, lib, C):
    a = arch(target)
    if lib.backend == "asm":
        words = struct.unpack("<22Q", read(target.GetProcess(), u(C), 8 * 22))
        return dict((n, words[w]) for n, w in ASM_WORDS[a])
    if lib.backend == "ucontext":
        mc = field(field(C.Dereference(), "ctx"), "uc_mcontext")
        if a == "x86_64":
            gregs = field(mc, "gregs")
            return dict((n, u(gregs.GetChildAtIndex(i))) for n, i in UCONTEXT_GREGS[a])
        regs = field(mc, "regs")
        pc = u(field(mc, "pc"))
        if u(regs.GetChildAtIndex(30)) == pc:  # glibc 2.34+: see coroutine-gdb.py
            pc = u(regs.GetChildAtIndex(1))
        found = dict(("x%d" % r, u(regs.GetChildAtIndex(r))) for r in range(19, 30))
        found.update(x30=pc, sp=u(field(mc, "sp")), pc=pc)
        return found
    raise Refusal("coroutine commands do not read the %s backend's contexts" % lib.backend)


def slice_in_block(lib, C, bottom, size):
    start = u(C) + lib.coroutine_size
    if lib.shallow_slice > 0 and 0 < size <= lib.shallow_slice:
        return start
    return start + ((bottom - start) & (lib.slice_align - 1))


def run(debugger, command):
    """Runs command in the selected frame as it is now (a command run from
    a command would otherwise keep the frame selected when it began)."""
    result = lldb.SBCommandReturnObject()
    frame = debugger.GetSelectedTarget().GetProcess().GetSelectedThread().GetSelectedFrame()
    debugger.GetCommandInterpreter().HandleCommand(command, lldb.SBExecutionContext(frame), result, False)
    return result


def write_register(debugger, name, value):
    """Into the innermost frame: a write that moves the frame pointer may
    leave an outer frame selected, whose stack pointer cannot be written."""
    debugger.GetSelectedTarget().GetProcess().GetSelectedThread().SetSelectedFrame(0)
    result = run(debugger, "register write %s 0x%x" % (name, value))
    if not result.Succeeded():
        raise Refusal("cannot write register %s: %s" % (name, result.GetError().strip()))


class LiveView:
    """C's slice on the run stack, its registers in the selected thread;
    what was there put back on leaving (also on errors)."""

    def __init__(self, debugger, target, lib, S, C):
        self.debugger, self.target, self.lib, self.S, self.C = debugger, target, lib, S, C

    def __enter__(self):
        process = self.target.GetProcess()
        thread = process.GetSelectedThread()
        self.saved_bytes = None
        self.saved_regs = {}
        try:
            thread.SetSelectedFrame(0)
            size = u(field(self.C.Dereference(), "size"))
            bottom = u(field(self.S, "top")) - size
            if u(field(self.S, "owner")) != u(self.C) and size > 0:
                block = slice_in_block(self.lib, self.C, bottom, size)
                self.bottom = bottom
                self.saved_bytes = read(process, bottom, size)
                error = lldb.SBError()
                process.WriteMemory(bottom, read(process, block, size), error)
            regs = saved_registers(self.target, self.lib, self.C)
            frame = thread.GetFrameAtIndex(0)
            self.saved_regs = dict((n, u(frame.FindRegister(n))) for n in regs)
            for name, value in regs.items():
                write_register(self.debugger, name, value)
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc):
        process = self.target.GetProcess()
        if self.saved_bytes is not None:
            error = lldb.SBError()
            process.WriteMemory(self.bottom, self.saved_bytes, error)
        process.GetSelectedThread().SetSelectedFrame(0)
        for name, value in self.saved_regs.items():
            write_register(self.debugger, name, value)
        return False


def waiting_frame(lib, thread):
    for i in range(thread.GetNumFrames()):
        if not lib.owns_frame(thread.GetFrameAtIndex(i)):
            return i
    return 0


def describe(frame, suspended):
    # A suspended coroutine's pc is where it resumes: the line is the call's.
    entry = frame.GetLineEntry()
    if suspended and frame.GetFrameID() == 0:
        address = frame.GetThread().GetProcess().GetTarget().ResolveLoadAddress(frame.GetPC() - 1)
        entry = address.GetLineEntry()
    where = "%s:%d" % (entry.GetFileSpec().GetFilename(), entry.GetLine()) if entry.IsValid() else "0x%x" % frame.GetPC()
    return "%s (%s)" % (frame.GetFunctionName() or "??", where)


def state_of(lib, S, id, C):
    if id == int(field(S, "running").GetValueAsSigned()):
        return "running"
    status = u(field(C.Dereference(), "status"))
    if status == READY:
        return "never started"
    if status == lib.suspended_elsewhere:
        return "suspended on another thread"
    return "suspended"


def start_of(target, C):
    func = u(field(field(C.Dereference(), "start"), "func"))
    name = target.ResolveLoadAddress(func).GetFunction().GetName()
    return "will start in %s" % (name or "0x%x" % func)


def with_frames(debugger, target, lib, S, id, C, action):
    """action(thread) with C's frames in the selected thread (or, for the
    running coroutine, in the thread whose stack is the run stack) and the
    frame where it waits selected; the selection and the program put back."""
    process = target.GetProcess()
    thread = process.GetSelectedThread()
    selected = (thread.GetIndexID(), thread.GetSelectedFrame().GetFrameID())
    try:
        if id == int(field(S, "running").GetValueAsSigned()):
            stack, top = u(field(S, "stack")), u(field(S, "top"))
            for t in process:
                if stack <= t.GetFrameAtIndex(0).GetSP() < top:
                    process.SetSelectedThread(t)
                    t.SetSelectedFrame(waiting_frame(lib, t))
                    return action(t)
            raise Refusal("coroutine %d runs, but no thread's stack pointer is on its run stack" % id)
        with LiveView(debugger, target, lib, S, C):
            t = process.GetSelectedThread()
            t.SetSelectedFrame(waiting_frame(lib, t))
            return action(t)
    finally:
        process.SetSelectedThreadByIndexID(selected[0])
        process.GetSelectedThread().SetSelectedFrame(selected[1])


def info(debugger, target, words, out):
    if words:
        raise Refusal("coroutine info takes no arguments")
    schedules = [(lib, S) for lib in libraries(target) for S in lib.schedules()]
    if not schedules:
        out.write("No schedule is open.\n")
    for lib, S in schedules:
        if not is_made(S):
            out.write("schedule 0x%x: being opened\n" % u(S))
            continue
        n = int(field(S, "nco").GetValueAsSigned())
        out.write("schedule 0x%x: %d coroutine%s, %s backend\n" % (u(S), n, "" if n == 1 else "s", lib.backend))
        out.write("  %3s  %-27s %7s  %s\n" % ("id", "state", "saved", "where"))
        for id in range(int(field(S, "cap").GetValueAsSigned())):
            C = field(S, "co").GetChildAtIndex(id, lldb.eNoDynamicValues, True)
            if u(C) == lib.empty:
                continue
            state = state_of(lib, S, id, C)
            if state == "never started":
                where = start_of(target, C)
            else:
                where = with_frames(debugger, target, lib, S, id, C,
                                    lambda t: describe(t.GetSelectedFrame(), state != "running"))
            saved = "-" if state == "running" else str(u(field(C.Dereference(), "size")))
            out.write("  %3d  %-27s %7s  %s\n" % (id, state, saved, where))


def backtrace(debugger, target, words, out):
    lib, S, words = split_schedule(target, words)
    id, C = find_coroutine(target, lib, S, words[0] if words else None)
    options = words[1:]
    if any(o != "full" and not o.isdigit() for o in options):
        raise Refusal("coroutine bt: after the id, only full or a number of frames")
    if state_of(lib, S, id, C) == "never started":
        out.write("coroutine %d has not started: it %s\n" % (id, start_of(target, C)))
        return
    count = [o for o in options if o.isdigit()]

    def show(thread):
        text = run(debugger, "thread backtrace" + (" -c " + count[0] if count else ""))
        out.write(text.GetOutput())
        if "full" in options:
            for i in range(thread.GetNumFrames()):
                thread.SetSelectedFrame(i)
                out.write("frame #%d locals:\n%s" % (i, run(debugger, "frame variable").GetOutput()))
    with_frames(debugger, target, lib, S, id, C, show)


def apply(debugger, target, words, out, text):
    schedule_named = False
    if words:
        first = target.EvaluateExpression(words[0])
        schedule_named = first.GetError().Success() and \
            first.GetType().GetPointeeType().GetName() in ("schedule", "struct schedule")
    parts = text.split(None, 3 if schedule_named else 2)[1:]  # less "apply"
    lib, S, _ = split_schedule(target, parts[:1] if schedule_named else [])
    rest = parts[1:] if schedule_named else parts
    id, C = find_coroutine(target, lib, S, rest[0] if rest else None)
    if len(rest) < 2:
        raise Refusal("coroutine apply: which command? e.g. coroutine apply %d frame variable" % id)
    if state_of(lib, S, id, C) == "never started":
        raise Refusal("coroutine %d has not started: it has no frames (it %s)" % (id, start_of(target, C)))

    def command(thread):
        result = run(debugger, rest[1])
        out.write(result.GetOutput())
        if not result.Succeeded():
            raise Refusal(result.GetError().strip())
    with_frames(debugger, target, lib, S, id, C, command)


def coroutine(debugger, command, result, internal_dict):
    """coroutine info | bt [SCHEDULE] ID [full|N] | apply [SCHEDULE] ID COMMAND"""
    target = debugger.GetSelectedTarget()
    words = shlex.split(command)
    try:
        if not target.GetProcess().IsValid():
            raise Refusal("no process: run the program first")
        if not words or words[0] not in ("info", "bt", "apply"):
            raise Refusal("usage: coroutine info | coroutine bt [SCHEDULE] ID [full|N] | "
                          "coroutine apply [SCHEDULE] ID COMMAND")
        if words[0] == "info":
            info(debugger, target, words[1:], result)
        elif words[0] == "bt":
            backtrace(debugger, target, words[1:], result)
        else:
            apply(debugger, target, words[1:], result, command)
    except Refusal as e:
        result.SetError(str(e))


def __lldb_init_module(debugger, internal_dict):
    debugger.HandleCommand("command script add -f %s.coroutine coroutine" % __name__)
