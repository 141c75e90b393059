# coroutine_lldb.py - lldb commands that show where suspended coroutines wait:
# the twin of coroutine-gdb.py (read that one first), for lldb users.
#
#   (lldb) command script import debug/coroutine_lldb.py
#   (lldb) coroutine info                           every open schedule and its coroutines
#   (lldb) coroutine bt [SCHEDULE] ID [full|N|-N]   a coroutine's whole backtrace
#   (lldb) coroutine apply [SCHEDULE] all|ID... [-q|-c|-s] COMMAND
#                                                   any command, among each one's frames
#
# (lldb imports no module with a dash in its name: hence the underscore.)
# lldb has no `info` prefix: gdb's `info coroutines` is `coroutine info`.
# As in gdb: the slice put back on the run stack and the saved registers
# loaded into the selected thread, the command run, everything put back;
# a command under `coroutine apply` may only look.  lldb has no hooks: the
# commands that would resume the program, pop frames or end it are refused
# by name (as lldb resolves it) before they run, an expression runs without
# lldb's JIT (which is how it would call a function in the program), and a
# write to the frames or the registers is undone and said.  A `script` is
# not looked into: if it resumed the program, that is said afterwards.
# Live processes only: lldb writes neither memory nor registers into a core
# file, and this script makes no patched copy of one (gdb's does).

import re
import struct

import lldb

LIBRARY_FUNCTIONS = ("coroutine_yield", "coroutine_try_yield", "coroutine_switch_context",
                     "coroutine_start_context", "swapcontext", "getcontext", "setcontext")
# The library's frames that start a coroutine: its entry's caller.
START_FUNCTIONS = ("coroutine_start_context", "run_coroutine", "run_coroutine_ucontext")
READY = 1

# The same tables as coroutine-gdb.py's.
ASM_WORDS = {
    "x86_64": [("rbx", 0), ("r12", 1), ("r13", 2), ("r14", 3), ("r15", 4), ("rsp", 5),
               ("rbp", 6), ("rip", 7)],
    "aarch64": [("x%d" % (19 + i), i) for i in range(12)] + [("sp", 20), ("pc", 11)],
}
UCONTEXT_GREGS = {"x86_64": [("rbx", 11), ("rbp", 10), ("r12", 4), ("r13", 5), ("r14", 6), ("r15", 7),
                             ("rsp", 15), ("rip", 16)]}

# Commands (as lldb resolves them) that would resume the program (it would
# run a suspended coroutine outside the library), pop its frames, or end,
# leave or change the program with the frames in place.
REFUSED_COMMANDS = (
    "thread step-in", "thread step-over", "thread step-out", "thread step-inst", "thread step-inst-over",
    "thread step-scripted", "thread until", "thread jump", "thread return", "thread continue",
    "process continue", "process launch", "process kill", "process detach", "process signal",
    "process attach", "process connect", "process load", "process unload", "_regexp-jump",
    "_regexp-attach", "memory write", "register write", "target delete", "quit")


class Refusal(Exception):
    """One line for the user."""


def u(value):
    return value.GetValueAsUnsigned()


def field(value, name):
    return value.GetChildMemberWithName(name)


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
        # The checked build's windows (an older library has none: one window).
        stride = view.GetChildMemberWithName("window_stride")
        self.window_stride = u(stride) if stride.IsValid() else 0
        windows = view.GetChildMemberWithName("windows")
        self.windows = u(windows) if windows.IsValid() else 1
        self.stack_size = u(view.GetChildMemberWithName("stack_size"))

    def run_stacks(self, S):
        """The addresses a coroutine of S runs at: from the lowest window's
        stack (the run stack's, outside the checked build) to the top."""
        top = u(field(S, "top"))
        return top - (self.windows - 1) * self.window_stride - self.stack_size, top

    def schedules(self):
        S = self.view.GetChildMemberWithName("open").Dereference()
        seen = set()
        while u(S) != 0 and u(S) not in seen:
            seen.add(u(S))
            yield S
            S = S.GetChildMemberWithName("next_open")

    def owns_frame(self, frame):
        if (frame.GetFunctionName() or "").split("@")[0] in LIBRARY_FUNCTIONS:  # swapcontext@plt too
            return True
        spec = frame.GetLineEntry().GetFileSpec()
        return spec.IsValid() and spec.GetFilename() == self.file


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


def open_schedules(target):
    return [(lib, S) for lib in libraries(target) for S in lib.schedules()]


def is_made(S):
    """Whether S's run stack is mapped (see the gdb script's is_made)."""
    return u(field(S, "stack")) != 0


def is_schedule(value):
    return value.GetError().Success() and value.GetType().GetPointeeType().GetName() in ("schedule", "struct schedule")


INTEGER_TYPES = (lldb.eBasicTypeInt, lldb.eBasicTypeUnsignedInt, lldb.eBasicTypeLong, lldb.eBasicTypeUnsignedLong,
                 lldb.eBasicTypeLongLong, lldb.eBasicTypeUnsignedLongLong, lldb.eBasicTypeShort,
                 lldb.eBasicTypeUnsignedShort, lldb.eBasicTypeChar, lldb.eBasicTypeSignedChar,
                 lldb.eBasicTypeUnsignedChar, lldb.eBasicTypeBool)


def named_schedule(target, word):
    """The open schedule a word names, or None when it names none."""
    value = target.EvaluateExpression(word)
    if not value.GetError().Success():
        return None
    if not is_schedule(value):
        if value.GetType().GetBasicType() not in INTEGER_TYPES:
            raise Refusal("%s is a %s, not a struct schedule * nor an id" % (word, value.GetType().GetName()))
        return None
    for lib, S in open_schedules(target):
        if u(S) == u(value):
            return lib, S
    raise Refusal("%s (0x%x) is not an open schedule" % (word, u(value)))


def split_schedule(target, words):
    if words:
        named = named_schedule(target, words[0])
        if named is not None:
            return named + (words[1:],)
    made = [(lib, S) for lib, S in open_schedules(target) if is_made(S)]
    if not made:
        raise Refusal("no schedule is open")
    if len(made) > 1:
        raise Refusal("%d schedules are open: name one first, e.g. coroutine bt 0x%x ID" % (len(made), u(made[0][1])))
    return made[0][0], made[0][1], words


def slot(S, id):
    return field(S, "co").GetChildAtIndex(id, lldb.eNoDynamicValues, True)


def find_coroutine(target, lib, S, word):
    if word is None:
        raise Refusal("which coroutine? give its id")
    try:
        id = int(word, 0)
    except ValueError:
        raise Refusal("%s is not a coroutine id" % word)
    if not is_made(S):
        raise Refusal("schedule 0x%x is still being opened" % u(S))
    C = coroutine_at(lib, S, id)
    if isinstance(C, str):
        raise Refusal(C)
    return id, C


def coroutine_at(lib, S, id):
    """Coroutine id of a made schedule, or the line that says why there is none."""
    cap = int(field(S, "cap").GetValueAsSigned())
    if not 0 <= id < cap:
        return "coroutine %d is out of range: schedule 0x%x has ids [0, %d)" % (id, u(S), cap)
    C = slot(S, id)
    if u(C) == lib.empty:
        return "coroutine %d: the slot is empty (no coroutine)" % id
    return C


def coroutines_of(lib, S):
    found = []
    for id in range(int(field(S, "cap").GetValueAsSigned())):
        C = slot(S, id)
        if u(C) != lib.empty:
            found.append((id, C))
    return found


# ---- A saved context's registers ---------------------------------------------------

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


def write(process, address, data):
    error = lldb.SBError()
    process.WriteMemory(address, data, error)
    if not error.Success():
        raise Refusal("cannot write 0x%x: %s" % (address, error.GetCString()))


def saved_registers(target, lib, ctx):
    """{register: value} of a saved context (a coroutine's ctx, or a
    schedule's main): what a switch to it would load."""
    a = arch(target)
    if lib.backend == "asm":
        words = struct.unpack("<22Q", read(target.GetProcess(), ctx.GetLoadAddress(), 8 * 22))
        return dict((n, words[w]) for n, w in ASM_WORDS[a])
    if lib.backend == "ucontext":
        mc = field(ctx, "uc_mcontext")
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


def stack_pointer(regs):
    return regs.get("rsp", regs.get("sp"))


def top_of(lib, S, C):
    """Where C's slice ends on the run stack: the run stack's top, less
    its window's place in the checked build (every address of a slice is
    computed from it)."""
    if lib.window_stride == 0:
        return u(field(S, "top"))
    return u(field(S, "top")) - u(field(C, "window")) * lib.window_stride


def slice_in_block(lib, C, bottom, size):
    start = u(C) + lib.coroutine_size
    if lib.shallow_slice > 0 and 0 < size <= lib.shallow_slice:
        return start
    return start + ((bottom - start) & (lib.slice_align - 1))


# ---- Who is where: the threads, and a switch in progress ---------------------------

class Frames:
    """Where a coroutine's frames are: on a thread (its id), or in a saved
    context (read as lib's backend saves one), its slice in place on the run
    stack or in its block."""

    def __init__(self, thread_id=None, lib=None, ctx=None, from_block=False):
        self.thread_id, self.lib, self.ctx, self.from_block = thread_id, lib, ctx, from_block


class Scene:
    """One schedule as the library's state and the threads show it (see
    coroutine-gdb.py's Scene)."""

    def __init__(self, target, lib, S, schedules):
        self.lib, self.S = lib, S
        self.switch = self.thread = self.main_of = self.deleted = None
        self.running, self.owner = -1, 0
        if not is_made(S):
            return
        stack, top = lib.run_stacks(S)
        unwinding = field(S, "unwinding")  # coroutine_delete's, with the id it unwinds
        if u(unwinding) != 0:
            self.deleted = int(field(unwinding.Dereference(), "id").GetValueAsSigned())
        for t in target.GetProcess():
            if stack <= t.GetFrameAtIndex(0).GetSP() < top:
                self.thread = (t.GetThreadID(), t.GetIndexID())
        self.running = int(field(S, "running").GetValueAsSigned())
        self.owner = u(field(S, "owner"))
        running_C = slot(S, self.running) if self.running >= 0 else None
        on_thread = " (thread %d)" % self.thread[1] if self.thread else ""
        if running_C is not None and u(running_C) == lib.empty:
            self.switch = "coroutine %d has finished and is leaving the run stack%s" % (self.running, on_thread)
        elif self.running >= 0 and self.thread is None:
            for other_lib, B in schedules:
                if u(B) != u(S) and is_made(B) and int(field(B, "running").GetValueAsSigned()) >= 0:
                    if stack <= stack_pointer(saved_registers(target, other_lib, field(B, "main"))) < top:
                        self.main_of = (other_lib, B)
            if self.main_of is None:
                C = running_C.Dereference()
                starting = u(field(C, "status")) == READY or u(field(C, "size")) == 0
                self.switch = "main is %s coroutine %d" % ("starting" if starting else "resuming", self.running)
        elif self.running < 0 and self.thread is not None:
            ids = [id for id, C in coroutines_of(lib, S) if u(C) == self.owner]
            self.switch = ("coroutine %d is yielding to main" % ids[0] if ids else
                           "a finished coroutine is leaving the run stack") + on_thread

    def state(self, id, C):
        """(state, Frames or None, whether it runs) of coroutine id: one that
        coroutine_delete is unwinding is "being deleted"."""
        state, frames = self.state_of_switches(id, C)
        return ("being deleted" if id == self.deleted else state), frames, state == "running"

    def state_of_switches(self, id, C):
        status = u(field(C.Dereference(), "status"))
        if id == self.running:
            if self.thread is not None:
                return "running", Frames(thread_id=self.thread[0])
            if self.main_of is not None:
                return "running", Frames(lib=self.main_of[0], ctx=field(self.main_of[1], "main"))
            if status == READY or u(field(C.Dereference(), "size")) == 0:
                return "being started", None
            return "being resumed", Frames(lib=self.lib, ctx=field(C.Dereference(), "ctx"), from_block=True)
        if status == READY:
            return "never started", None
        if u(C) == self.owner and self.running < 0 and self.thread is not None:
            return "yielding", Frames(thread_id=self.thread[0])
        from_block = u(C) != self.owner or self.switch is not None
        state = "suspended on another thread" if status == self.lib.suspended_elsewhere else "suspended"
        return state, Frames(lib=self.lib, ctx=field(C.Dereference(), "ctx"), from_block=from_block)


def scenes(target):
    schedules = open_schedules(target)
    return dict((u(S), Scene(target, lib, S, schedules)) for lib, S in schedules)


# ---- Putting a coroutine's frames in place, and back ------------------------------

def run(debugger, command):
    """Runs command in the selected frame as it is now (a command run from
    a command would otherwise keep the frame selected when it began)."""
    result = lldb.SBCommandReturnObject()
    frame = debugger.GetSelectedTarget().GetProcess().GetSelectedThread().GetSelectedFrame()
    debugger.GetCommandInterpreter().HandleCommand(command, lldb.SBExecutionContext(frame), result, False)
    return result


def write_register(debugger, thread, name, value):
    """In the innermost frame's context: in an outer frame's, lldb writes
    where that frame's caller saved the register (its return address, for
    the pc), and a write that moves the frame pointer may leave an outer
    frame selected."""
    if isinstance(value, int):
        value = "0x%x" % value
    result = lldb.SBCommandReturnObject()
    debugger.GetCommandInterpreter().HandleCommand("register write %s %s" % (name, value),
                                                   lldb.SBExecutionContext(thread.GetFrameAtIndex(0)), result, False)
    if not result.Succeeded():
        raise Refusal("cannot write register %s: %s" % (name, result.GetError().strip()))


def all_registers(thread):
    """[(name, bytes)] of every register of the thread, as lldb lists them
    (a register before the parts of it), less the names that lldb takes for
    another (x86_64's "sp" is rsp's generic name before it is its low half)."""
    frame = thread.GetFrameAtIndex(0)
    sets = frame.GetRegisters()
    found = []
    for i in range(sets.GetSize()):
        for r in sets.GetValueAtIndex(i):
            if frame.FindRegister(r.GetName()).GetByteSize() == r.GetByteSize():
                found.append((r.GetName(), bytes(r.GetData().uint8s)))
    return found


def changed_registers(thread, before):
    now = dict(all_registers(thread))
    return [name for name, data in before if now.get(name) != data]


def put_back_registers(debugger, thread, before):
    """Writes back each register that differs, in lldb's order, so that a
    register put back puts back its parts; with `register write`, which
    (unlike SBValue's writes) makes lldb unwind the thread again."""
    for name, data in before:
        if bytes(thread.GetFrameAtIndex(0).FindRegister(name).GetData().uint8s) == data:
            continue
        if len(data) <= 8:
            write_register(debugger, thread, name, int.from_bytes(data, "little"))
        else:  # a vector, as lldb prints one
            write_register(debugger, thread, name, '"{%s}"' % " ".join("0x%02x" % b for b in data))


class LiveView:
    """A coroutine's frames: its slice on the run stack (unless there), the
    registers of its saved context in the selected thread; everything that
    was there put back on leaving (also on errors)."""

    def __init__(self, debugger, target, lib, S, C, frames):
        self.debugger, self.target, self.lib, self.S, self.C, self.frames = debugger, target, lib, S, C, frames

    def __enter__(self):
        process = self.target.GetProcess()
        self.thread = process.GetSelectedThread()
        self.saved_bytes = None
        self.saved_registers = all_registers(self.thread)
        regs = saved_registers(self.target, self.frames.lib, self.frames.ctx)
        # The bytes its frames lie on (and the red zone below them), kept
        # and put back: lldb has no way to refuse a write there.
        top = top_of(self.lib, self.S, self.C)
        self.bottom = max(top - self.lib.stack_size, stack_pointer(regs) - 128)
        try:
            self.thread.SetSelectedFrame(0)
            self.saved_bytes = read(process, self.bottom, top - self.bottom)
            if self.frames.from_block:
                size = u(field(self.C.Dereference(), "size"))
                block = slice_in_block(self.lib, self.C, top - size, size)
                write(process, top - size, read(process, block, size))
            self.frames_bytes = read(process, self.bottom, top - self.bottom)
            for name, value in regs.items():
                write_register(self.debugger, self.thread, name, value)
        except BaseException:
            self.__exit__()
            raise
        return self

    def written(self):
        """What a command wrote among the frames: their bytes, or registers
        (their names)."""
        found = changed_registers(self.thread, self.loaded_registers)
        if read(self.target.GetProcess(), self.bottom, len(self.frames_bytes)) != self.frames_bytes:
            found.insert(0, "its frames")
        return found

    def __exit__(self, *exc):
        if self.saved_bytes is not None:
            write(self.target.GetProcess(), self.bottom, self.saved_bytes)
        put_back_registers(self.debugger, self.thread, self.saved_registers)
        return False


# ---- Describing a coroutine --------------------------------------------------------

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


def entry_of(lib, thread, index):
    """The outermost of its frames before the library's that started it,
    stepping over the library's frames in between (see coroutine-gdb.py)."""
    entry = None
    for frame in (thread.GetFrameAtIndex(i) for i in range(index, thread.GetNumFrames())):
        if not lib.owns_frame(frame):
            entry = frame
        elif (frame.GetFunctionName() or "").split("(")[0].lstrip(":") in START_FUNCTIONS:  # "::run_coroutine(...)"
            return entry.GetFunctionName() or "??" if entry is not None else "?"
    return "?"  # the unwinding stopped short of the start


def start_of(target, C):
    func = u(field(field(C.Dereference(), "start"), "func"))
    name = target.ResolveLoadAddress(func).GetFunction().GetName()
    return name or "0x%x" % func


class Coroutine:
    def __init__(self, scene, id, C):
        self.scene, self.id, self.C = scene, id, C
        self.state, self.frames, self.runs = scene.state(id, C)

    def name(self):
        return "coroutine %d" % self.id

    def no_frames(self, target):
        if self.state == "being started":
            return "coroutine %d is being started: it will start in %s" % (self.id, start_of(target, self.C))
        return "coroutine %d has not started: it will start in %s" % (self.id, start_of(target, self.C))

    def patched(self):
        return self.frames is not None and self.frames.thread_id is None

    def with_frames(self, debugger, target, action):
        """action(thread, view or None) with its frames in the selected
        thread (or its own thread, where it runs), the frame where it waits
        selected; the selection and the program put back."""
        process = target.GetProcess()
        lib = self.scene.lib
        if self.frames.thread_id is not None:
            thread = process.GetThreadByID(self.frames.thread_id)
            process.SetSelectedThread(thread)
            thread.SetSelectedFrame(waiting_frame(lib, thread))
            return action(thread, None)
        with LiveView(debugger, target, lib, self.scene.S, self.C, self.frames) as view:
            thread = process.GetSelectedThread()
            thread.SetSelectedFrame(waiting_frame(lib, thread))
            view.loaded_registers = all_registers(thread)
            return action(thread, view)


def looking(target, body):
    """Runs a coroutine command on a stopped live process, not nested; the
    selected thread and frame put back."""
    process = target.GetProcess()
    if not process.IsValid():
        raise Refusal("no process: run the program first")
    if Applying.command is not None:
        raise Refusal("not inside coroutine apply (%s's frames are in place)" % Applying.frames_of)
    libraries(target)
    if "core" in (process.GetPluginName() or ""):
        raise Refusal("coroutine commands need a live process: lldb writes neither memory nor registers of a "
                      "core file (gdb with debug/coroutine-gdb.py shows a core file's coroutines)")
    if process.GetState() != lldb.eStateStopped:
        raise Refusal("the program is running: stop it first (process interrupt)")
    thread = process.GetSelectedThread()
    selected = (thread.GetIndexID(), thread.GetSelectedFrame().GetFrameID())
    try:
        return body()
    finally:
        process.SetSelectedThreadByIndexID(selected[0])
        process.GetSelectedThread().SetSelectedFrame(selected[1])


# ---- The commands ----------------------------------------------------------------

def info(debugger, target, words, out):
    if words:
        raise Refusal("coroutine info takes no arguments")
    schedules = open_schedules(target)
    if not schedules:
        out.write("No schedule is open.\n")
        return
    scene_of = scenes(target)
    for lib, S in schedules:
        scene = scene_of[u(S)]
        if not is_made(S):
            out.write("schedule 0x%x: being opened\n" % u(S))
            continue
        n = int(field(S, "nco").GetValueAsSigned())
        out.write("schedule 0x%x: %d coroutine%s, %s backend\n" % (u(S), n, "" if n == 1 else "s", lib.backend))
        if scene.switch:
            out.write("  stopped in a switch: %s\n" % scene.switch)
        rows = [("id", "state", "saved", "entry", "where")]
        for id, C in coroutines_of(lib, S):
            co = Coroutine(scene, id, C)
            if co.frames is None:
                entry, where = start_of(target, C), "-"
            else:
                suspended = co.patched()
                entry, where = co.with_frames(debugger, target, lambda t, view: (
                    entry_of(lib, t, t.GetSelectedFrame().GetFrameID()), describe(t.GetSelectedFrame(), suspended)))
            saved = "-" if co.runs else str(u(field(C.Dereference(), "size")))
            rows.append((str(id), co.state, saved, entry, where))
        widths = [max(len(row[i]) for row in rows) for i in range(4)]
        for row in rows:
            out.write("  %*s  %-*s  %*s  %-*s  %s\n" % (max(widths[0], 3), row[0], widths[1], row[1],
                                                         max(widths[2], 5), row[2], widths[3], row[3], row[4]))


def backtrace(debugger, target, words, out):
    lib, S, words = split_schedule(target, words)
    id, C = find_coroutine(target, lib, S, words[0] if words else None)
    options = words[1:]
    if any(o != "full" and not re.match(r"^-?[0-9]+$", o) for o in options):
        raise Refusal("coroutine bt: after the id, only full or a number of frames (N, or -N for the outermost)")
    co = Coroutine(scenes(target)[u(S)], id, C)
    if co.frames is None:
        out.write(co.no_frames(target) + "\n")
        return
    counts = [int(o) for o in options if o != "full"]

    def show(thread, view):
        first, count = 0, thread.GetNumFrames()
        if co.state != "running":  # its frames end at its start: it has no resumer
            count = next((i + 1 for i in range(count)
                          if thread.GetFrameAtIndex(i).GetFunctionName() == "coroutine_start_context"), count)
        if counts and counts[0] >= 0:
            count = min(count, counts[0])
        elif counts:
            first = max(0, count + counts[0])
            count = -counts[0]
        out.write(run(debugger, "thread backtrace -s %d -c %d" % (first, count)).GetOutput())
        if "full" in options:
            for i in range(first, min(first + count, thread.GetNumFrames())):
                thread.SetSelectedFrame(i)
                out.write("frame #%d locals:\n%s" % (i, run(debugger, "frame variable").GetOutput()))
    co.with_frames(debugger, target, show)


class Applying:
    """While a command runs under coroutine apply: which, and among whose
    frames."""
    command = None
    frames_of = None


def resolved(debugger, command):
    """The command as lldb resolves its aliases ("n" is "thread step-over")."""
    result = lldb.SBCommandReturnObject()
    debugger.GetCommandInterpreter().ResolveCommand(command, result)
    return result.GetOutput().strip() if result.Succeeded() else command


def checked_command(debugger, command, co):
    """The command to run among co's frames: refused in one line if it
    would resume, end or change the program; an expression without JIT."""
    full = resolved(debugger, command)
    for refused in REFUSED_COMMANDS:
        if full == refused or full.startswith(refused + " "):
            if refused.endswith(" write"):
                raise Refusal("coroutine apply: %s would write to the program: refused (%s's frames are a copy, "
                              "put back afterwards)" % (command, co.name()))
            if refused == "thread return":
                raise Refusal("coroutine apply: %s would pop frames of %s: refused" % (command, co.name()))
            if re.match(r"^(thread (step|until|jump|continue)|process (continue|signal)|_regexp-jump)", refused):
                raise Refusal("coroutine apply: %s would resume the program and run %s outside the library: "
                              "refused (resume it outside coroutine apply)" % (command, co.name()))
            raise Refusal("coroutine apply: %s would end, leave or change the program with %s's frames in place: "
                          "refused" % (command, co.name()))
    if co.patched() and re.match(r"^expression( |$)", full):
        rest = full[len("expression"):].strip()
        if not rest.startswith("-"):
            rest = "-- " + rest
        return "expression --allow-jit false " + rest
    return command


def run_among(debugger, target, co, command, thread, view):
    """The command among co's frames: its output; a refusal in one line."""
    Applying.command, Applying.frames_of = command, co.name()
    process = target.GetProcess()
    stop_id = process.GetStopID(True)
    try:
        result = run(debugger, checked_command(debugger, command, co))
    finally:
        Applying.command = Applying.frames_of = None
    if view is not None and process.GetStopID(True) != stop_id:
        raise Refusal("coroutine apply: %s ran the program with %s's frames in place: what it computes may now be "
                      "wrong" % (command, co.name()))
    error = result.GetError().strip()
    if view is not None and "Interpreter doesn't handle" in error:
        raise Refusal("coroutine apply: %s would call a function in the program, over the run stack's bytes: "
                      "refused (call it where the coroutine runs)" % command)
    written = view.written() if view is not None else []
    if written:
        raise Refusal("coroutine apply: %s wrote to %s: undone (%s's frames and registers are a copy, put back "
                      "afterwards)" % (command, ", ".join(written), co.name()))
    if not result.Succeeded():  # lldb's last error line, without its "error: <user expression 3>:1:1: "
        lines = [line for line in error.splitlines() if line.startswith("error:")] or error.splitlines() or [command]
        raise Refusal(re.sub(r"^(error: )?(<user expression [0-9]+>:[0-9]+:[0-9]+: )?", "", lines[-1]))
    return result.GetOutput()


def chosen_coroutines(scene, ids):
    """The Coroutine of each of ids ("all": each coroutine); for an id
    without one, the line that says so (see coroutine-gdb.py)."""
    lib, S = scene.lib, scene.S
    if ids == "all":
        return [Coroutine(scene, id, C) for id, C in coroutines_of(lib, S)]
    if not is_made(S):
        raise Refusal("schedule 0x%x is still being opened" % u(S))
    found = []
    for id in ids:
        C = coroutine_at(lib, S, id)
        found.append(C if isinstance(C, str) else Coroutine(scene, id, C))
    return found


def id_list(words):
    if words and words[0] == "all":
        return "all", words[1:]
    ids = []
    while words and re.match(r"^[0-9]+(-[0-9]+)?$", words[0]):
        low, _, high = words.pop(0).partition("-")
        if high and int(high) < int(low):
            raise Refusal("coroutine apply: inverted range %s-%s" % (low, high))
        ids.extend(range(int(low), int(high or low) + 1))
    if not ids:
        raise Refusal("coroutine apply: which coroutines? all, or ids (e.g. 0 2-4)")
    return ids, words


def apply(debugger, target, text, out):
    tokens = list(re.finditer(r"\S+", text))[1:]  # less "apply"
    words = [t.group(0) for t in tokens]
    named = named_schedule(target, words[0]) if words and words[0] != "all" else None
    if named is not None:
        words = words[1:]
    ids, rest = id_list(words)
    flags = []
    while rest and rest[0] in ("-q", "-c", "-s"):
        flags.append(rest.pop(0))
    if not rest:
        raise Refusal("coroutine apply: which command? e.g. coroutine apply %s frame variable"
                      % ("all" if ids == "all" else ids[0]))
    command = text[tokens[len(tokens) - len(rest)].start():].strip()
    if named is not None:
        targets = [named]
    elif ids == "all":
        targets = [(lib, S) for lib, S in open_schedules(target) if is_made(S)]
    else:
        lib, S, _ = split_schedule(target, [])
        targets = [(lib, S)]
    scene_of = scenes(target)
    chosen = [co for lib, S in targets for co in chosen_coroutines(scene_of[u(S)], ids)]
    for co in chosen:
        if isinstance(co, str):  # skipped, as gdb's thread apply skips an unknown thread
            out.write("warning: %s\n" % co)
            continue
        header = "\nCoroutine %d (%s%s):\n" % (co.id, co.state, ", schedule 0x%x" % u(co.scene.S) if len(targets) > 1 else "")
        if co.frames is None:
            if "-s" not in flags:
                out.write(("" if "-q" in flags else header) + co.no_frames(target) + "\n")
            continue
        try:
            output = co.with_frames(debugger, target, lambda t, view: run_among(debugger, target, co, command, t, view))
        except Refusal as e:
            if "-s" in flags:
                continue
            if "-c" not in flags:
                out.write("" if "-q" in flags else header)
                raise
            output = "%s\n" % e
        if "-s" in flags and not output:
            continue
        out.write(("" if "-q" in flags else header) + output)


def coroutine(debugger, command, result, internal_dict):
    """coroutine info | bt [SCHEDULE] ID [full|N|-N] | apply [SCHEDULE] all|ID... [-q|-c|-s] COMMAND"""
    target = debugger.GetSelectedTarget()
    words = command.split()
    try:
        if not words or words[0] not in ("info", "bt", "apply"):
            raise Refusal("usage: coroutine info | coroutine bt [SCHEDULE] ID [full|N|-N] | "
                          "coroutine apply [SCHEDULE] all|ID... [-q|-c|-s] COMMAND")
        if words[0] == "info":
            looking(target, lambda: info(debugger, target, words[1:], result))
        elif words[0] == "bt":
            looking(target, lambda: backtrace(debugger, target, words[1:], result))
        else:
            looking(target, lambda: apply(debugger, target, command, result))
    except Refusal as e:
        result.SetError(str(e))


def __lldb_init_module(debugger, internal_dict):
    debugger.HandleCommand("command script add -f %s.coroutine coroutine" % __name__)
