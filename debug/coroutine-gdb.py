# coroutine-gdb.py - gdb commands that show where suspended coroutines wait.
#
#   gdb -x debug/coroutine-gdb.py ./prog        (or `source` it in gdb)
#
#   info coroutines                                 every open schedule and its coroutines
#   coroutine bt [SCHEDULE] ID [full|N|-N]          a coroutine's whole backtrace
#   coroutine apply [SCHEDULE] all|ID... [-q|-c|-s] COMMAND
#                                                   any command, among each one's frames
#
# A suspended coroutine's frames are on no stack: its slice waits in its
# heap block and its registers in its context.  To show them, the commands
# put the slice back at its addresses on the run stack (keeping what is
# there), load the saved registers into the selected thread (keeping all of
# its own), run the command, and put everything back, into that thread and
# that inferior whatever the command selected, also when it fails or is
# interrupted.  A core file cannot be written: there the first command
# opens a copy of it in its place, and each coroutine's slice and registers
# (in the thread's NT_PRSTATUS note) are written into the copy and taken
# out again, so that gdb reads the core file only once.
#
# So that nothing they do changes what the program computes, they work only
# while every thread is stopped (any thread may resume a schedule, and so
# run on its run stack), and a command under `coroutine apply` may only
# look: what would resume the program or pop frames is refused by a hook
# before it runs (the program would run the coroutine outside the library);
# a function call in the program is refused (it would run on the run stack,
# over the bytes of the coroutines that own it, while the library says that
# another coroutine runs; and gdb lets every thread run during a call); so
# is a write to memory (the frames are a copy, put back afterwards), and
# so is turning either back on (`set`, `with`, Python); a write to a
# register is undone and said, and so is whatever no hook could refuse.
#
# What the build decided (the backend, where a slice lies in its block) the
# library tells in coroutine_debugger_view ("The debugger's view" at the end
# of coroutine.cpp), one per copy of the library in the process.

import os
import re
import shutil
import struct
import tempfile

import gdb
from gdb.FrameDecorator import FrameDecorator

# The library's frames above the one where a coroutine waits.
LIBRARY_FUNCTIONS = ("coroutine_yield", "coroutine_try_yield", "coroutine_switch_context",
                     "coroutine_start_context", "swapcontext", "getcontext", "setcontext")
# The library's frames that start a coroutine: its entry's caller.
START_FUNCTIONS = ("coroutine_start_context", "run_coroutine", "run_coroutine_ucontext")
READY = 1


class Library:
    """One copy of the library: its view, and the file its frames are in."""

    def __init__(self, symbol):
        self.view = symbol.value()
        self.file = symbol.symtab.fullname()
        self.backend = self.view["backend"].string()
        self.coroutine_size = int(self.view["coroutine_size"])
        self.shallow_slice = int(self.view["shallow_slice"])
        self.slice_align = int(self.view["slice_align"])
        self.suspended_elsewhere = int(self.view["suspended_elsewhere"])
        self.empty = int(self.view["empty"])
        # The checked build's windows: a coroutine's top is S->top less its
        # window's (an older library has no such field: one window).
        names = [f.name for f in self.view.type.strip_typedefs().fields()]
        self.window_stride = int(self.view["window_stride"]) if "window_stride" in names else 0
        self.windows = int(self.view["windows"]) if "windows" in names else 1
        self.stack_size = int(self.view["stack_size"])

    def run_stacks(self, S):
        """The addresses a coroutine of S runs at: from the lowest window's
        stack (the run stack's, outside the checked build) to the top."""
        top = int(S["top"])
        return top - (self.windows - 1) * self.window_stride - self.stack_size, top

    def schedules(self):
        S = self.view["open"].dereference()
        seen = set()
        while int(S) != 0 and int(S) not in seen:
            seen.add(int(S))
            yield S
            S = S["next_open"]

    def owns_frame(self, frame):
        if (frame.name() or "").split("@")[0] in LIBRARY_FUNCTIONS:  # swapcontext@plt too
            return True
        symtab = frame.find_sal().symtab
        return symtab is not None and symtab.fullname() == self.file


def why_no_view():
    """The one line that says why the program has no view to read."""
    def has(name):
        try:
            gdb.parse_and_eval("(long)&'%s'" % name)
            return True
        except gdb.error:
            return False
    if has("coroutine_debugger_view"):
        return "the coroutine library has no debug information: build coroutine.cpp with -g"
    if has("coroutine_open"):
        return "this coroutine library has no debugger's hook (coroutine_debugger_view): use a newer coroutine.cpp"
    return "no coroutine library in this program (no coroutine_debugger_view)"


def libraries():
    try:
        symbols = gdb.lookup_static_symbols("coroutine_debugger_view")
    except gdb.error:
        symbols = []
    if not symbols:
        raise gdb.GdbError(why_no_view())
    if gdb.selected_inferior().pid == 0:
        raise gdb.GdbError("no process: run the program, attach to it, or open a core file")
    return [Library(s) for s in symbols]


def open_schedules():
    """(library, schedule) for every open schedule, half-made ones included."""
    return [(lib, S) for lib in libraries() for S in lib.schedules()]


def is_made(S):
    """Whether S's run stack is mapped: a copy of the library older than this one listed a
    schedule being opened before it mapped its run stack."""
    return int(S["stack"]) != 0


def schedule_type_of(value):
    t = value.type.strip_typedefs()
    return t.code == gdb.TYPE_CODE_PTR and t.target().strip_typedefs().name == "schedule"


def short_name(name):
    """A function's name without a C++ parameter list."""
    if name and name.endswith(")"):
        depth = 0
        for i in range(len(name) - 1, -1, -1):
            depth += {")": 1, "(": -1}.get(name[i], 0)
            if depth == 0:
                return name[:i] or name
    return name


# ---- Finding coroutines from the command's words -------------------------------

def eval_words(text):
    try:
        return gdb.parse_and_eval(text)
    except gdb.error as e:
        raise gdb.GdbError("%s: %s" % (text, e))


def named_schedule(word):
    """The open schedule a word names (an expression giving a struct
    schedule *), or None when it names none."""
    try:
        value = gdb.parse_and_eval(word)
    except gdb.error:
        return None
    if not schedule_type_of(value):
        if value.type.strip_typedefs().code not in (gdb.TYPE_CODE_INT, gdb.TYPE_CODE_BOOL):
            raise gdb.GdbError("%s is a %s, not a struct schedule * nor an id" % (word, value.type))
        return None
    for lib, S in open_schedules():
        if int(S) == int(value):
            return lib, S
    raise gdb.GdbError("%s (0x%x) is not an open schedule" % (word, int(value)))


def split_schedule(words):
    """(library, schedule, the words after it): the schedule named by the
    first word if it is a struct schedule *, else the only open one."""
    if words:
        named = named_schedule(words[0])
        if named is not None:
            return named + (words[1:],)
    made = [(lib, S) for lib, S in open_schedules() if is_made(S)]
    if not made:
        raise gdb.GdbError("no schedule is open")
    if len(made) > 1:
        raise gdb.GdbError("%d schedules are open: name one first, e.g. coroutine bt 0x%x ID"
                           % (len(made), int(made[0][1])))
    return made[0][0], made[0][1], words


def find_coroutine(lib, S, word):
    if word is None:
        raise gdb.GdbError("which coroutine? give its id")
    value = eval_words(word)
    if value.type.strip_typedefs().code not in (gdb.TYPE_CODE_INT, gdb.TYPE_CODE_BOOL):
        raise gdb.GdbError("%s is not a coroutine id" % word)
    if not is_made(S):
        raise gdb.GdbError("schedule 0x%x is still being opened" % int(S))
    id = int(value)
    C = coroutine_at(lib, S, id)
    if isinstance(C, str):
        raise gdb.GdbError(C)
    return id, C


def coroutine_at(lib, S, id):
    """Coroutine id of a made schedule, or the line that says why there is none."""
    cap = int(S["cap"])
    if not 0 <= id < cap:
        return "coroutine %d is out of range: schedule 0x%x has ids [0, %d)" % (id, int(S), cap)
    C = S["co"][id]
    if int(C) == lib.empty:
        return "coroutine %d: the slot is empty (no coroutine)" % id
    return C


def coroutines_of(lib, S):
    """(id, C) for each coroutine of a made schedule, in id order."""
    return [(id, S["co"][id]) for id in range(int(S["cap"])) if int(S["co"][id]) != lib.empty]


# ---- A saved context's registers, per backend and architecture -------------------

# asm_switch.S's context tables: the word each register is saved in.
ASM_WORDS = {
    "x86_64": [("rbx", 0), ("r12", 1), ("r13", 2), ("r14", 3), ("r15", 4), ("rsp", 5),
               ("rbp", 6), ("rip", 7)],
    "aarch64": [("x%d" % (19 + i), i) for i in range(12)] + [("sp", 20), ("pc", 11)],
}
# asm's d8-d15 (aarch64), callee-saved: where locals may be kept.
ASM_FP_WORDS = {"aarch64": [("d%d" % (8 + i), 12 + i) for i in range(8)]}
# glibc's mcontext: gregs[] on x86_64 (REG_RBX...), regs[]/sp/pc on aarch64.
UCONTEXT_GREGS = {"x86_64": [("rbx", 11), ("rbp", 10), ("r12", 4), ("r13", 5), ("r14", 6), ("r15", 7),
                             ("rsp", 15), ("rip", 16)]}


def arch():
    name = gdb.selected_inferior().architecture().name()
    if name == "i386:x86-64":
        return "x86_64"
    if name.startswith("aarch64"):
        return "aarch64"
    raise gdb.GdbError("coroutine commands know x86_64 and aarch64, not %s" % name)


def asm_registers(ctx, a):
    """asm_switch.S's context: words, in the order of its layout table."""
    words = struct.unpack("<22Q", bytes(gdb.selected_inferior().read_memory(int(ctx.address), 8 * 22)))
    return [(n, words[w]) for n, w in ASM_WORDS[a] + ASM_FP_WORDS.get(a, [])]


def ucontext_registers(ctx, a):
    """glibc's ucontext_t, as swapcontext saved it."""
    mc = ctx["uc_mcontext"]
    if a == "x86_64":
        return [(n, int(mc["gregs"][i])) for n, i in UCONTEXT_GREGS[a]]
    # glibc 2.34 and later resume at a "mov x30, x1; ret" of their own,
    # the return address in x1 (and x30 and pc at that ret).
    pc = int(mc["pc"])
    if int(mc["regs"][30]) == pc:
        pc = int(mc["regs"][1])
    regs = [("x%d" % r, int(mc["regs"][r])) for r in range(19, 30)]
    return regs + [("x30", pc), ("sp", int(mc["sp"])), ("pc", pc)]


CONTEXT_READERS = {"asm": asm_registers, "ucontext": ucontext_registers}


def saved_registers(lib, ctx):
    """{register: value} of a saved context (a coroutine's ctx, or a
    schedule's main): what a switch to it would load."""
    if lib.backend not in CONTEXT_READERS:
        raise gdb.GdbError("coroutine commands do not read the %s backend's contexts" % lib.backend)
    regs = CONTEXT_READERS[lib.backend](ctx, arch())
    return dict((n, v & 0xFFFFFFFFFFFFFFFF) for n, v in regs)


def stack_pointer(regs):
    return regs.get("rsp", regs.get("sp"))


def top_of(lib, S, C):
    """Where C's slice ends on the run stack: the run stack's top, less
    its window's place in the checked build (every address of a slice is
    computed from it)."""
    if lib.window_stride == 0:
        return int(S["top"])
    return int(S["top"]) - int(C["window"]) * lib.window_stride


def slice_in_block(lib, C, bottom, size):
    """Where C's block holds its slice: coroutine.cpp's slice_in_block."""
    start = int(C) + lib.coroutine_size
    if lib.shallow_slice > 0 and 0 < size <= lib.shallow_slice:
        return start
    return start + ((bottom - start) & (lib.slice_align - 1))


# ---- Who is where: the threads, and a switch in progress ---------------------------

def check_all_stopped(command):
    """Any thread may resume a schedule, and so run on its run stack: the
    commands look at one (and write to it) only while none runs."""
    for thread in gdb.selected_inferior().threads():
        if thread.is_running():
            raise gdb.GdbError("%s: thread %d is running, and any thread may run on a schedule's run stack: "
                               "stop them all first (interrupt -a)" % (command, thread.num))


def thread_stack_pointers():
    """[((LWP, number), stack pointer)] for every thread of the program (by
    LWP: opening a core file again makes new thread objects)."""
    found = []
    for thread in gdb.selected_inferior().threads():
        thread.switch()
        found.append(((thread.ptid[1], thread.num), read_register(gdb.newest_frame(), "sp")))
    return found


def thread_of(lwp):
    """The thread of an LWP (a core file opened again has new objects)."""
    for thread in gdb.selected_inferior().threads():
        if thread.ptid[1] == lwp:
            return thread
    raise gdb.GdbError("no thread %d any more" % lwp)


class Frames:
    """Where a coroutine's frames are to be found: on a thread (it runs: the
    thread's LWP), or in a saved context (read as lib's backend saves one),
    with its slice either in place on the run stack or in its block."""

    def __init__(self, lwp=None, lib=None, ctx=None, from_block=False):
        self.lwp = lwp
        self.lib, self.ctx, self.from_block = lib, ctx, from_block


def deleted_id(S):
    """The id of the coroutine that coroutine_delete is unwinding, or None."""
    unwinding = S["unwinding"]
    return int(unwinding.dereference()["id"]) if int(unwinding) != 0 else None


# Below a live stack pointer, the bytes that a function may still use
# without moving it (x86_64's red zone; aarch64 has none, and it costs little).
RED_ZONE = 128


class Scene:
    """One schedule as the library's state and the threads show it: which
    coroutine runs where, and what is being switched when a thread is
    stopped inside the library, between the two."""

    def __init__(self, lib, S, stack_pointers, schedules):
        self.lib, self.S = lib, S
        self.switch = self.thread = self.main_of = self.deleted = None
        self.running, self.owner = -1, 0
        if not is_made(S):
            return
        stack, top = lib.run_stacks(S)
        live = [sp for t, sp in stack_pointers if stack <= sp < top]
        self.thread = next((t for t, sp in stack_pointers if stack <= sp < top), None)
        self.running = int(S["running"])
        self.owner = int(S["owner"])
        self.deleted = deleted_id(S)
        running_C = S["co"][self.running] if self.running >= 0 else None
        on_thread = " (thread %d)" % self.thread[1] if self.thread else ""
        if running_C is not None and int(running_C) == lib.empty:
            self.switch = "coroutine %d has finished and is leaving the run stack%s" % (self.running, on_thread)
        elif self.running >= 0 and self.thread is None:
            # Either it runs and has resumed a coroutine of another
            # schedule, whose main context is on this run stack...
            for other_lib, B in schedules:
                if int(B) != int(S) and is_made(B) and int(B["running"]) >= 0:
                    sp = stack_pointer(saved_registers(other_lib, B["main"]))
                    if stack <= sp < top:
                        self.main_of = (other_lib, B)
                        live.append(sp)
            # ...or main is switching to it.
            if self.main_of is None:
                starting = int(running_C["status"]) == READY or int(running_C["size"]) == 0
                self.switch = "main is %s coroutine %d" % ("starting" if starting else "resuming", self.running)
        elif self.running < 0 and self.thread is not None:
            ids = [id for id, C in coroutines_of(lib, S) if int(C) == self.owner]
            self.switch = ("coroutine %d is yielding to main" % ids[0] if ids else
                           "a finished coroutine is leaving the run stack") + on_thread
        if self.owner != 0 and self.owner != lib.empty:  # its slice is in place
            live.append(top - int(S["owner"]["size"]))
        # The run stack's bytes that someone still needs: a view keeps them
        # (see LiveView).
        self.live_bottom = max(stack, min(live or [top]) - RED_ZONE)

    def state(self, id, C):
        """(state, Frames or None, whether it runs) of coroutine id: one that
        coroutine_delete is unwinding is "being deleted"."""
        state, frames = self.state_of_switches(id, C)
        return ("being deleted" if id == self.deleted else state), frames, state == "running"

    def state_of_switches(self, id, C):
        status = int(C["status"])
        if id == self.running:
            if self.thread is not None:
                return "running", Frames(lwp=self.thread[0])
            if self.main_of is not None:
                return "running", Frames(lib=self.main_of[0], ctx=self.main_of[1]["main"])
            if status == READY or int(C["size"]) == 0:  # no context yet
                return "being started", None
            return "being resumed", Frames(lib=self.lib, ctx=C["ctx"], from_block=True)
        if status == READY:
            return "never started", None
        if int(C) == self.owner and self.running < 0 and self.thread is not None:
            return "yielding", Frames(lwp=self.thread[0])
        # The owner's bytes are still on the run stack, unless a switch
        # is copying another's over them.
        from_block = int(C) != self.owner or self.switch is not None
        state = "suspended on another thread" if status == self.lib.suspended_elsewhere else "suspended"
        return state, Frames(lib=self.lib, ctx=C["ctx"], from_block=from_block)


def scenes():
    """A Scene of every open schedule, taken before any view changes a
    thread's registers."""
    schedules = open_schedules()
    pointers = thread_stack_pointers()
    return dict((int(S), Scene(lib, S, pointers, schedules)) for lib, S in schedules)


# ---- Putting a coroutine's frames in place, and back ------------------------------

def read_register(frame, name):
    value = frame.read_register(name)
    if value.type.strip_typedefs().code == gdb.TYPE_CODE_UNION:  # aarch64's d8: {f, u, s}
        value = value["u"]
    return int(value) & 0xFFFFFFFFFFFFFFFF


def write_register(name, value):
    """Into the innermost frame: a write that moves the frame pointer may
    leave an outer frame selected, whose stack pointer cannot be written."""
    gdb.newest_frame().select()
    target = "$%s.u" % name if name.startswith("d") else "$" + name
    gdb.execute("set var %s = %d" % (target, value), to_string=True)


def all_registers(more=()):
    """{name: value} of every register a thread's state is made of (gdb's
    "save" group, the one an inferior call saves), and of more."""
    frame = gdb.newest_frame()
    found = {}
    for register in list(frame.architecture().registers("save")) + list(more):
        value = frame.read_register(register)
        value.fetch_lazy()
        found[getattr(register, "name", register)] = value
    return found


def register_text(value):
    return value.format_string(format="z", raw=True)


def put_back_registers(before, names):
    """Writes back those of names whose value differs from before's, each
    into the innermost frame (see write_register)."""
    for name in names:
        if register_text(gdb.newest_frame().read_register(name)) != register_text(before[name]):
            gdb.newest_frame().select()
            gdb.set_convenience_variable("_coroutine_register", before[name])
            gdb.execute("set var $%s = $_coroutine_register" % name, to_string=True)
    gdb.set_convenience_variable("_coroutine_register", None)
    gdb.invalidate_cached_frames()


def thread_key(thread):
    """A thread's name that outlives its object (a core file opened in
    another's place makes new ones): its inferior's number and its LWP."""
    return thread.inferior.num, thread.ptid[1]


def find_thread(key):
    for inferior in gdb.inferiors():
        if inferior.num == key[0]:
            for thread in inferior.threads():
                if thread.ptid[1] == key[1]:
                    return thread
    return None


def thread_registers(threads):
    """{thread key: all_registers()} of each stopped thread of threads."""
    found = {}
    for thread in threads:
        if thread.is_valid() and not thread.is_running():
            thread.switch()
            found[thread_key(thread)] = all_registers()
    return found


class Effects:
    """What gdb did to the program while it is entered, as its events tell:
    the registers it wrote (and in which thread: the command may have
    selected another), the functions it called, the memory it wrote."""

    def __init__(self):
        self.registers, self.calls, self.writes = [], 0, []

    def __enter__(self):
        gdb.events.register_changed.connect(self.register_written)
        gdb.events.inferior_call.connect(self.called)
        gdb.events.memory_changed.connect(self.memory_written)
        return self

    def register_written(self, event):
        thread = gdb.selected_thread()
        self.registers.append((thread_key(thread), thread.global_num, event.regnum))

    def called(self, event):
        if isinstance(event, gdb.InferiorCallPreEvent):
            self.calls += 1

    def memory_written(self, event):
        self.writes.append(int(event.address))

    def __exit__(self, *exc):
        gdb.events.register_changed.disconnect(self.register_written)
        gdb.events.inferior_call.disconnect(self.called)
        gdb.events.memory_changed.disconnect(self.memory_written)
        return False

    def threads_written(self, but):
        """{thread key: its number} of the threads written to, but but's."""
        return dict((key, number) for key, number, _ in self.registers if key != but)

    def register_names(self):
        table = {}
        for line in gdb.execute("maintenance print registers", to_string=True).splitlines()[1:]:
            words = line.split()
            if len(words) > 1 and words[1].isdigit():
                table[int(words[1])] = words[0]
        return [table.get(n, str(n)) for n in sorted(set(n for _, _, n in self.registers))]


def is_core():
    connection = gdb.selected_inferior().connection
    return connection is not None and connection.type == "core"


class Selection:
    """The selected inferior, thread and frame, put back on leaving."""

    home = None  # the thread selected when the command began (see Coroutine.with_frames)

    def __enter__(self):
        thread = gdb.selected_thread()
        self.thread = thread_key(thread) if thread is not None else None
        try:
            self.level = gdb.selected_frame().level()
        except gdb.error:
            self.level = None
        Selection.home = self.thread
        return self

    def __exit__(self, *exc):
        gdb.invalidate_cached_frames()
        thread = find_thread(self.thread) if self.thread is not None else None
        if thread is not None and thread.is_valid() and not thread.is_running():
            thread.switch()
            if self.level is not None:
                frame = gdb.newest_frame()
                for _ in range(self.level):
                    frame = frame.older() or frame
                frame.select()
        return False


class LiveView:
    """A coroutine's frames in a live process: its slice on the run stack
    (unless it is there already), the registers of its saved context in the
    selected thread; what was there kept and put back, into that thread and
    that inferior whatever the command selected."""

    def __init__(self, scene, C, frames):
        self.scene, self.C, self.frames = scene, C, frames

    def __enter__(self):
        lib, S, C = self.scene.lib, self.scene.S, self.C
        self.thread, self.inferior = gdb.selected_thread(), gdb.selected_inferior()
        gdb.newest_frame().select()
        regs = saved_registers(self.frames.lib, self.frames.ctx)
        self.saved_registers = all_registers(regs)
        # What is put back: the registers loaded, or all (see CoroutineApply.run).
        self.written = []
        # The run stack's bytes from the slice's bottom, or from the lowest
        # that someone still needs, are kept: a function that a command
        # calls runs below the slice.
        top, size = top_of(lib, S, C), int(C["size"])
        self.bottom = min(top - size, self.scene.live_bottom)
        self.saved_bytes = bytes(self.inferior.read_memory(self.bottom, top - self.bottom))
        try:
            if self.frames.from_block:
                block = slice_in_block(lib, C, top - size, size)
                self.inferior.write_memory(top - size, bytes(self.inferior.read_memory(block, size)))
            for name, value in regs.items():
                self.written.append(name)
                write_register(name, value)
            gdb.invalidate_cached_frames()
            gdb.newest_frame().select()
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc):
        if self.thread.is_valid():
            self.thread.switch()
        # The bytes first: writing registers forgets the frames gdb
        # unwound through the coroutine's.
        self.inferior.write_memory(self.bottom, self.saved_bytes)
        gdb.invalidate_cached_frames()
        put_back_registers(self.saved_registers, self.written)
        return False


# A core file's layout (ELF64, little-endian): the notes NT_PRSTATUS (a
# thread's general registers at pr_reg) and NT_PRFPREG (aarch64's v0-v31).
PT_LOAD, PT_NOTE, NT_PRSTATUS, NT_PRFPREG = 1, 4, 1, 2
PR_PID, PR_REG = 32, 112
PR_REG_INDEX = {
    "x86_64": dict(r15=0, r14=1, r13=2, r12=3, rbp=4, rbx=5, rip=16, rsp=19),
    "aarch64": dict([("x%d" % i, i) for i in range(31)] + [("sp", 31), ("pc", 32)]),
}


def core_file_name():
    text = gdb.execute("info target", to_string=True)
    marker = "Local core dump file:"
    if marker in text:
        line = text.split(marker, 1)[1].strip().splitlines()[0]
        return line.split("`", 1)[1].rsplit("'", 1)[0]
    raise gdb.GdbError("cannot tell which core file gdb has open")


class CoreLayout:
    """Where a core file keeps the memory it holds (its PT_LOAD segments)
    and each thread's registers (its notes), read once from its headers."""

    def __init__(self, path):
        self.loads, self.general, self.fp = [], {}, {}
        with open(path, "rb") as f:
            head = f.read(64)
            if head[:4] != b"\x7fELF" or head[4] != 2 or head[5] != 1:
                return
            phoff, = struct.unpack_from("<Q", head, 32)
            phentsize, phnum = struct.unpack_from("<HH", head, 54)
            f.seek(phoff)
            table = f.read(phentsize * phnum)
            for i in range(phnum):
                ptype, _, offset, vaddr, _, filesz, _ = struct.unpack_from("<IIQQQQQ", table, i * phentsize)
                if ptype == PT_LOAD:
                    self.loads.append((vaddr, filesz, offset))
                elif ptype == PT_NOTE:
                    f.seek(offset)
                    self.read_notes(f.read(filesz), offset)

    def read_notes(self, notes, offset):
        at, lwp = 0, None
        while at + 12 <= len(notes):
            namesz, descsz, ntype = struct.unpack_from("<III", notes, at)
            desc = at + 12 + (namesz + 3) // 4 * 4
            if ntype == NT_PRSTATUS:
                lwp = struct.unpack_from("<i", notes, desc + PR_PID)[0]
                self.general[lwp] = offset + desc + PR_REG
            elif ntype == NT_PRFPREG and lwp is not None:  # the thread's, after its NT_PRSTATUS
                self.fp[lwp] = offset + desc
            at = desc + (descsz + 3) // 4 * 4

    def places(self, lwp, memory, regs, a):
        """[(file offset, bytes)] that put memory ({address: bytes}) and
        thread lwp's registers in the file; None where it does not say how."""
        found = []
        for address, data in memory.items():
            offsets = [offset + address - vaddr for vaddr, filesz, offset in self.loads
                       if vaddr <= address and address + len(data) <= vaddr + filesz]
            if not offsets:
                return None
            found.append((offsets[0], data))
        if lwp not in self.general:
            return None
        for name, value in regs.items():
            if name in PR_REG_INDEX[a]:
                found.append((self.general[lwp] + 8 * PR_REG_INDEX[a][name], struct.pack("<Q", value)))
            elif name.startswith("d") and lwp in self.fp:  # aarch64's d8-d15: v8-v15's low halves
                found.append((self.fp[lwp] + 16 * int(name[1:]), struct.pack("<Q", value)))
        return found


def write_places(path, places, replaced):
    """Writes each (offset, bytes) into the file, and what it replaces into
    replaced as it goes (all that was written, if it stops half way)."""
    with open(path, "r+b") as f:
        for offset, data in places:
            f.seek(offset)
            replaced.append((offset, f.read(len(data))))
            f.seek(offset)
            f.write(data)


def forget_what_gdb_read():
    """After the bytes of the open core file changed: gdb reads its
    registers and memory again."""
    gdb.execute("maintenance flush register-cache", to_string=True)
    gdb.execute("maintenance flush dcache", to_string=True)
    gdb.invalidate_cached_frames()


class CoreCopy:
    """The copy of a core file that the commands write into, opened once in
    its place: gdb cannot write a core file, and opening one takes it long
    (a copy opened for each coroutine cost seconds).  A view writes a
    coroutine's slice and registers into it and puts its bytes back after
    its command, so that between commands the copy is the original, byte
    for byte.  It stays open until another core file is; its temporary
    directory is removed then, or when gdb exits.  One per inferior."""

    of_inferior = {}  # inferior number: (the copy's name, its directory, its layout, the original's name)
    open_name = None  # the open core file's name, read once per command (see looking)

    @staticmethod
    def name():
        """The name of the core file open now (gdb says it only in info target)."""
        if CoreCopy.open_name is None:
            CoreCopy.open_name = core_file_name()
        return CoreCopy.open_name

    @staticmethod
    def layout():
        copy = CoreCopy.of_inferior.get(gdb.selected_inferior().num)
        return copy[2] if copy is not None and copy[0] == CoreCopy.name() else CoreLayout(CoreCopy.name())

    @staticmethod
    def give_up():
        """The original opened again in the copy's place (whose bytes could
        not be put back), and the copy removed."""
        number = gdb.selected_inferior().num
        copy = CoreCopy.of_inferior.get(number)
        if copy is not None:
            open_core(copy[3])
            CoreCopy.open_name = copy[3]
            CoreCopy.remove(number)

    @staticmethod
    def opened():
        """The copy's name, opened in place of the open core file if needed."""
        number, name = gdb.selected_inferior().num, CoreCopy.name()
        copy = CoreCopy.of_inferior.get(number)
        if copy is None or copy[0] != name:
            CoreCopy.remove(number)
            directory = tempfile.mkdtemp(prefix="coroutine-gdb-")
            try:
                path = os.path.join(directory, os.path.basename(name))
                shutil.copyfile(name, path)
                open_core(path)
            except BaseException:
                shutil.rmtree(directory, ignore_errors=True)
                raise
            CoreCopy.of_inferior[number] = (path, directory, CoreLayout(name), name)
            CoreCopy.open_name = path
        return CoreCopy.open_name

    @staticmethod
    def remove(number):
        copy = CoreCopy.of_inferior.pop(number, None)
        if copy is not None:
            shutil.rmtree(copy[1], ignore_errors=True)

    @staticmethod
    def remove_all(*event):
        for number in list(CoreCopy.of_inferior):
            CoreCopy.remove(number)


gdb.events.gdb_exiting.connect(CoreCopy.remove_all)


def open_core(path):
    """Opens a core file, the same thread selected."""
    key = thread_key(gdb.selected_thread())
    confirm = gdb.parameter("confirm")
    gdb.execute("set confirm off")
    try:
        gdb.execute("core-file %s" % path, to_string=True)
    finally:
        gdb.execute("set confirm %s" % ("on" if confirm else "off"))
    thread = find_thread(key)
    if thread is not None:
        thread.switch()


def next_best(lib, S, C):
    """Where no view can be had: the resume address, then every word of
    the saved slice that points into a function with a line, as
    "function (file:line)"; return addresses, or stale words that look
    like them."""
    size = int(C["size"])
    bottom = top_of(lib, S, C) - size
    data = bytes(gdb.selected_inferior().read_memory(slice_in_block(lib, C, bottom, size), size))
    words = [saved_registers(lib, C["ctx"]).get(name, 0) for name in ("rip", "pc")]
    words += [struct.unpack_from("<Q", data, i)[0] for i in range(0, size - 7, 8)]
    found = []
    for word in words:
        block = gdb.block_for_pc(word) if word > 1 else None
        while block is not None and block.function is None:  # a lexical block inside one
            block = block.superblock
        sal = gdb.find_pc_line(word - 1) if block is not None else None
        if block is not None and block.function is not None and sal.symtab is not None:
            found.append("%s (%s:%d)" % (block.function.print_name, os.path.basename(sal.symtab.filename), sal.line))
    return ", ".join(found) or "none"


class CoreView:
    """A coroutine's frames in a core file: its slice and the registers of
    its saved context written into the copy (see CoreCopy), in the selected
    thread's note; the copy's bytes put back after the command."""

    def __init__(self, scene, C, frames):
        self.scene, self.C, self.frames = scene, C, frames

    def __enter__(self):
        lib, S, C = self.scene.lib, self.scene.S, self.C
        lwp = gdb.selected_thread().ptid[1]
        memory = {}
        if self.frames.from_block:
            size = int(C["size"])
            bottom = top_of(lib, S, C) - size
            memory[bottom] = bytes(gdb.selected_inferior().read_memory(slice_in_block(lib, C, bottom, size), size))
        regs = saved_registers(self.frames.lib, self.frames.ctx)
        places = CoreCopy.layout().places(lwp, memory, regs, arch())
        if places is None:
            raise gdb.GdbError("cannot patch a copy of core file %s (not a 64-bit little-endian ELF core "
                               "holding the run stack); the next best, the code addresses in its saved "
                               "slice, innermost first (some may be stale): %s"
                               % (CoreCopy.name(), next_best(lib, S, C)))
        self.path, self.replaced = CoreCopy.opened(), []
        try:
            write_places(self.path, places, self.replaced)
            forget_what_gdb_read()
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc):
        # The copy must read as the original again, for the next views.
        try:
            write_places(self.path, reversed(self.replaced), [])
        except BaseException:
            CoreCopy.give_up()
            raise
        forget_what_gdb_read()
        return False


# ---- What a command may do among a coroutine's frames ------------------------------

# Commands that would resume the program (it would run a suspended
# coroutine outside the library, on bytes that are put back afterwards),
# pop its frames, or end or leave the program with the frames in place.
# gdb runs a command's hook first, and an error there stops the command
# before it runs: each has a hook that refuses it inside coroutine apply.
REFUSED_COMMANDS = (
    "advance", "continue", "finish", "jump", "next", "nexti", "step", "stepi", "until", "signal",
    "queue-signal", "return", "reverse-continue", "reverse-finish", "reverse-next", "reverse-nexti",
    "reverse-step", "reverse-stepi", "run", "start", "starti", "kill", "kill inferiors", "detach",
    "detach inferiors", "detach checkpoint", "disconnect", "attach", "quit", "checkpoint", "restart",
    "core-file", "target core", "target native", "target remote", "target extended-remote",
    "compile code", "compile print", "compile file")

# The settings that let gdb call a function in the program or write to it:
# off while a command runs among a coroutine's frames put in place (see
# LookingOnly).  Setting one there is refused by its hook; `with` sets one
# without running hooks, and so do the commands that evaluate expressions
# or run others, whose hooks refuse them while one is on.  What no hook
# sees (a user-defined command's `if`) is said afterwards (see Effects).
PERMISSIONS = ("may-call-functions", "may-write-memory")
EVALUATING_COMMANDS = ("print", "call", "output", "printf", "x", "display", "eval", "set", "set variable",
                       "python", "python-interactive")
HOOKED_COMMANDS = REFUSED_COMMANDS + tuple("set " + name for name in PERMISSIONS) + EVALUATING_COMMANDS


class Applying:
    """While a command runs under coroutine apply: what it is, whose frames
    it sees, and whether it may only look (they are put in place), for the
    hooks' refusals."""
    command = None
    frames_of = None
    looking_only = False


class RefusedInApply(gdb.Function):
    """$_coroutine_refuses(COMMAND): refuses COMMAND inside coroutine apply,
    in one line (the hooks of HOOKED_COMMANDS call it); 0 elsewhere."""

    def __init__(self):
        super().__init__("_coroutine_refuses")

    def invoke(self, command):
        if Applying.command is not None:
            error = refused_command(command.string(), Applying.frames_of)
            if error is not None:
                raise gdb.GdbError(error)
        return 0


def refused_command(command, who):
    """The line that refuses command among who's frames, or None."""
    if command in REFUSED_COMMANDS:
        return refused_resume(command, who)
    if not Applying.looking_only:
        return None
    names = [command[len("set "):]] if command.startswith("set may-") else [n for n in PERMISSIONS if gdb.parameter(n)]
    if not names:
        return None
    why = ("a function called there would run over the run stack's bytes" if "may-call-functions" in names else
           "%s's frames are a copy, put back afterwards" % who)
    return "coroutine apply: %s turns %s on among %s's frames: refused (%s)" % (
        Applying.command, " and ".join(names), who, why)


def refused_resume(command, who):
    if command == "return":
        return "coroutine apply: return would pop frames of %s: refused" % who
    if command.startswith("compile"):
        return refusal(command, who, "may-call-functions is off")
    if command.split()[0] in ("kill", "detach", "disconnect", "quit", "attach", "core-file", "target", "run",
                              "start", "starti", "checkpoint", "restart", "queue-signal"):
        return ("coroutine apply: %s would end, leave or change the program with %s's frames in place: refused"
                % (command, who))
    return ("coroutine apply: %s would resume the program and run %s outside the library: refused "
            "(resume it outside coroutine apply)" % (command, who))


def hook_name(command):
    words = command.split()
    return " ".join(words[:-1] + ["hook-" + words[-1]])


def user_commands():
    """{name: body lines} of the user-defined commands (show user)."""
    found, name = {}, None
    for line in gdb.execute("show user", to_string=True).splitlines():
        match = re.match(r'^User command "(.*)":$', line)
        if match:
            name = match.group(1)
            found[name] = []
        elif name is not None and line.startswith("  "):
            found[name].append(line[2:])
    return found


def install_hooks():
    """Each hooked command's hook, ours first; a hook of the user's own
    is kept after it.  Run before each coroutine apply, so that a hook
    defined since is taken in too."""
    defined = user_commands()
    confirm = gdb.parameter("confirm")
    gdb.execute("set confirm off")
    try:
        for command in HOOKED_COMMANDS:
            ours = ['if $_coroutine_refuses("%s")' % command, "end"]
            body = defined.get(hook_name(command))
            if body is not None and body[:2] == ours:
                continue
            try:
                gdb.execute("define %s\n%s\nend" % (hook_name(command), "\n".join(ours + (body or []))),
                            to_string=True)
            except gdb.error:
                pass  # a command this gdb does not have
    finally:
        gdb.execute("set confirm %s" % ("on" if confirm else "off"))


class LookingOnly:
    """While a command runs among a coroutine's frames put in place: gdb
    refuses calls into the program and writes to its memory."""

    def __enter__(self):
        self.settings = dict((name, gdb.parameter(name)) for name in PERMISSIONS)
        for name in self.settings:
            gdb.execute("set %s off" % name)
        Applying.looking_only = True

    def __exit__(self, *exc):
        Applying.looking_only = False  # first: the hooks would refuse these
        for name, value in self.settings.items():
            gdb.execute("set %s %s" % (name, "on" if value else "off"))
        return False


def refusal(command, who, error):
    """gdb's error while a command ran among who's frames, as one line."""
    text = str(error)
    if "may-call-functions is off" in text:
        return ("coroutine apply: %s would call a function in the program, over the run stack's bytes: refused "
                "(call it where the coroutine runs)" % command)
    if "Writing to memory is not allowed" in text:
        return ("coroutine apply: %s would write to the program: refused (%s's frames are a copy, put back "
                "afterwards)" % (command, who))
    return text


def effects_said(command, who, effects):
    """The line that says what a command did that no hook refused, or None:
    a call or a write (the run stack is put back, what it did elsewhere
    stays), a write to registers (undone)."""
    if effects.calls:
        return ("coroutine apply: %s called a function in the program among %s's frames: the run stack and the "
                "registers are put back, not what it changed elsewhere" % (command, who))
    if effects.writes:
        return ("coroutine apply: %s wrote to the program at 0x%x: undone on the run stack, not elsewhere (%s's "
                "frames are a copy, put back afterwards)" % (command, effects.writes[0], who))
    if effects.registers:
        names = effects.register_names()
        threads = sorted(effects.threads_written(Selection.home).values())
        elsewhere = " (in thread %s)" % ", ".join(str(n) for n in threads) if threads else ""
        return ("coroutine apply: %s wrote to register%s %s%s: undone (%s's registers are a copy, put back "
                "afterwards)" % (command, "" if len(names) == 1 else "s", ", ".join(names), elsewhere, who))
    return None


# ---- Describing a coroutine --------------------------------------------------------

def waiting_frame(lib):
    """The innermost frame outside the library, or the newest."""
    frame = gdb.newest_frame()
    while frame is not None and lib.owns_frame(frame):
        frame = frame.older()
    return frame or gdb.newest_frame()


def describe(frame, suspended):
    # A suspended coroutine's pc is where it resumes, after a call: the
    # line is the call's (gdb's own rule for the frames of callers).
    sal = gdb.find_pc_line(frame.pc() - 1) if suspended and frame.level() == 0 else frame.find_sal()
    where = "%s:%d" % (os.path.basename(sal.symtab.filename), sal.line) if sal.symtab else "0x%x" % frame.pc()
    return "%s (%s)" % (frame.name() or "??", where)


def entry_of(lib, frame):
    """The function a coroutine started in: the outermost of its frames
    before the library's that started it (its entry is not kept once it
    runs).  If the entry tail-called another, that one: it replaced it.
    Frames of the library's in between (coroutine_delete's unwinding, from
    the yield) are stepped over: the start is the frame that ends the walk,
    whatever follows it."""
    entry = None
    try:
        while frame is not None:
            if not lib.owns_frame(frame):
                entry = frame
            elif short_name(frame.name()) in START_FUNCTIONS:
                return entry.name() or "??" if entry is not None else "?"
            frame = frame.older()
    except gdb.error:
        pass
    return "?"  # the unwinding stopped short of the start


class EndAtStart:
    """A frame filter: while the frames of a coroutine that does not run
    are in place, its backtrace ends at its start (coroutine_start_context),
    whose caller would be read from S->main, where the last resumer of the
    schedule was saved, not this coroutine's (it has none while it waits)."""

    def __init__(self):
        self.name = "coroutine-end-at-start"
        self.priority = 100
        self.enabled = False
        gdb.frame_filters[self.name] = self

    def filter(self, frames):
        for frame in frames:
            yield AsBtNamesIt(frame)
            if frame.inferior_frame().name() == "coroutine_start_context":
                return


class AsBtNamesIt(FrameDecorator):
    """A frame named as bt names it without a filter (a C++ function without
    its parameters' types), not as a filtered frame is by default."""

    def function(self):
        frame = self.inferior_frame()
        return frame.name() or frame.pc()


END_AT_START = EndAtStart()


def start_of(C):
    func = int(C["start"]["func"])
    block = gdb.block_for_pc(func)
    return short_name(block.function.print_name) if block is not None and block.function else "0x%x" % func


class Coroutine:
    """One coroutine of a scene: its state, and a way to its frames."""

    def __init__(self, scene, id, C):
        self.scene, self.id, self.C = scene, id, C
        self.state, self.frames, self.runs = scene.state(id, C)

    def name(self):
        return "coroutine %d" % self.id

    def no_frames(self):
        """Why it has none to show: it has not started."""
        if self.state == "being started":
            return "coroutine %d is being started: it will start in %s" % (self.id, start_of(self.C))
        return "coroutine %d has not started: it will start in %s" % (self.id, start_of(self.C))

    def patched(self):
        return self.frames is not None and self.frames.lwp is None

    def with_frames(self, action):
        """action() with its frames in the thread selected when the command
        began (or its own thread, where it runs), the frame where it waits
        selected; everything put back.  A failing command's error is one
        line, as if it had run alone."""
        lib = self.scene.lib
        try:
            if self.frames.lwp is not None:
                thread_of(self.frames.lwp).switch()
                waiting_frame(lib).select()
                return action()
            find_thread(Selection.home).switch()
            view = CoreView if is_core() else LiveView
            with view(self.scene, self.C, self.frames) as self.view:
                waiting_frame(lib).select()
                END_AT_START.enabled = self.state != "running"
                try:
                    return action()
                finally:
                    END_AT_START.enabled = False
        except gdb.GdbError:
            raise
        except gdb.error as e:
            raise gdb.GdbError(str(e))


def looking(command_name, body):
    """Runs a coroutine command: every thread stopped, nothing nested, the
    selected inferior, thread and frame put back."""
    if Applying.command is not None:
        raise gdb.GdbError("%s: not inside coroutine apply (%s's frames are in place)"
                           % (command_name, Applying.frames_of))
    libraries()
    check_all_stopped(command_name)
    CoreCopy.open_name = None
    with Selection():
        return body()


# ---- The commands ----------------------------------------------------------------

class InfoCoroutines(gdb.Command):
    """Every open schedule and its coroutines: id, state, bytes saved, entry function, and where each waits.
Usage: info coroutines
Where a coroutine waits is the innermost frame outside the library; its entry
is the outermost (the function it started in).  Stopped inside the library,
a line under the schedule says what is being switched; the coroutine that
coroutine_delete is unwinding is "being deleted"."""

    def __init__(self):
        super().__init__("info coroutines", gdb.COMMAND_STACK)

    def invoke(self, arg, from_tty):
        if arg.strip():
            raise gdb.GdbError("info coroutines takes no arguments")
        looking("info coroutines", self.show_all)

    def show_all(self):
        schedules = open_schedules()
        if not schedules:
            print("No schedule is open.")
            return
        scene_of = scenes()
        for lib, S in schedules:
            self.show(scene_of[int(S)])

    def show(self, scene):
        lib, S = scene.lib, scene.S
        if not is_made(S):
            print("schedule 0x%x: being opened" % int(S))
            return
        n = int(S["nco"])
        print("schedule 0x%x: %d coroutine%s, %s backend" % (int(S), n, "" if n == 1 else "s", lib.backend))
        if scene.switch:
            print("  stopped in a switch: %s" % scene.switch)
        rows = [("id", "state", "saved", "entry", "where")]
        for id, C in coroutines_of(lib, S):
            co = Coroutine(scene, id, C)
            if co.frames is None:
                entry, where = start_of(C), "-"
            else:
                suspended = co.patched()
                entry, where = co.with_frames(lambda: (entry_of(lib, gdb.selected_frame()),
                                                       describe(gdb.selected_frame(), suspended)))
            # A running coroutine's last slice is no longer saved.
            saved = "-" if co.runs else str(int(C["size"]))
            rows.append((str(id), co.state, saved, entry, where))
        widths = [max(len(row[i]) for row in rows) for i in range(4)]
        for row in rows:
            print("  %*s  %-*s  %*s  %-*s  %s" % (max(widths[0], 3), row[0], widths[1], row[1],
                                                   max(widths[2], 5), row[2], widths[3], row[3], row[4]))


class CoroutinePrefix(gdb.Command):
    """Look at coroutines: coroutine bt, coroutine apply (and info coroutines).
They work only while every thread is stopped (any thread may run on a
schedule's run stack): in non-stop mode, interrupt -a first."""

    def __init__(self):
        super().__init__("coroutine", gdb.COMMAND_STACK, prefix=True)


class CoroutineBacktrace(gdb.Command):
    """A coroutine's whole backtrace, as bt prints a thread's.
Usage: coroutine bt [SCHEDULE] ID [full|N|-N]
SCHEDULE is an expression giving a struct schedule *, needed only when more
than one schedule is open; full, N (the innermost N frames) and -N (the
outermost N) are bt's."""

    def __init__(self):
        super().__init__("coroutine bt", gdb.COMMAND_STACK)

    def invoke(self, arg, from_tty):
        looking("coroutine bt", lambda: self.backtrace(gdb.string_to_argv(arg), from_tty))

    def backtrace(self, words, from_tty):
        lib, S, words = split_schedule(words)
        id, C = find_coroutine(lib, S, words[0] if words else None)
        options = words[1:]
        if any(o != "full" and not re.match(r"^-?[0-9]+$", o) for o in options):
            raise gdb.GdbError("coroutine bt: after the id, only full or a number of frames (N, or -N for the outermost)")
        co = Coroutine(scenes()[int(S)], id, C)
        if co.frames is None:
            print(co.no_frames())
            return
        co.with_frames(lambda: gdb.execute(" ".join(["bt"] + options), from_tty))


def chosen_coroutines(scene, ids):
    """The Coroutine of each of ids ("all": each coroutine) of the scene's
    schedule; for an id without one, the line that says so (apply skips it,
    as thread apply skips a thread that is gone)."""
    lib, S = scene.lib, scene.S
    if ids == "all":
        return [Coroutine(scene, id, C) for id, C in coroutines_of(lib, S)]
    if not is_made(S):
        raise gdb.GdbError("schedule 0x%x is still being opened" % int(S))
    found = []
    for id in ids:
        C = coroutine_at(lib, S, id)
        found.append(C if isinstance(C, str) else Coroutine(scene, id, C))
    return found


def id_list(words):
    """(ids or "all", the words after them): ids as thread apply takes
    them (3, 2-5), "all"; else the first word, evaluated, as one id."""
    if words and words[0] == "all":
        return "all", words[1:]
    ids = []
    while words and re.match(r"^[0-9]+(-[0-9]+)?$", words[0]):
        low, _, high = words.pop(0).partition("-")
        if high and int(high) < int(low):
            raise gdb.GdbError("coroutine apply: inverted range %s-%s" % (low, high))
        ids.extend(range(int(low), int(high or low) + 1))
    if not ids and words:
        value = eval_words(words.pop(0))
        if value.type.strip_typedefs().code not in (gdb.TYPE_CODE_INT, gdb.TYPE_CODE_BOOL):
            raise gdb.GdbError("coroutine apply: which coroutines? all, or ids (e.g. 0 2-4)")
        ids.append(int(value))
    if not ids:
        raise gdb.GdbError("coroutine apply: which coroutines? all, or ids (e.g. 0 2-4)")
    return ids, words


class CoroutineApply(gdb.Command):
    """Runs a gdb command among each given coroutine's frames, as thread apply does among threads'.
Usage: coroutine apply [SCHEDULE] all|ID... [-q|-c|-s] COMMAND
IDs are numbers and ranges (0 2-4), an id without a coroutine skipped with a
line; all is every coroutine of SCHEDULE, or of every open schedule.  The
frame where each waits (the innermost outside the library) is selected:
frame apply all -s COMMAND runs it in whichever frames it works in (print x
where x is a local).  -q prints no header before each, -c goes on after an
error, -s skips the coroutines where COMMAND fails or prints nothing.
The command may only look: what would resume the program or pop frames,
call a function in it or write to it is refused in one line; afterwards
the program's stack and registers are as before.  A running coroutine's
frames are its thread's own: a call works there, resuming is refused."""

    def __init__(self):
        super().__init__("coroutine apply", gdb.COMMAND_STACK)

    def invoke(self, arg, from_tty):
        looking("coroutine apply", lambda: self.apply(arg, from_tty))

    def apply(self, arg, from_tty):
        tokens = list(re.finditer(r"\S+", arg))
        words = [t.group(0) for t in tokens]
        named = named_schedule(words[0]) if words and words[0] != "all" else None
        if named is not None:
            words = words[1:]
        ids, rest = id_list(words)
        flags = []
        while rest and rest[0] in ("-q", "-c", "-s"):
            flags.append(rest.pop(0))
        if not rest:
            raise gdb.GdbError("coroutine apply: which command? e.g. coroutine apply %s info locals"
                               % ("all" if ids == "all" else ids[0]))
        command = arg[tokens[len(tokens) - len(rest)].start():].strip()
        if named is not None:
            targets = [named]
        elif ids == "all":
            targets = [(lib, S) for lib, S in open_schedules() if is_made(S)]
        else:
            lib, S, _ = split_schedule([])
            targets = [(lib, S)]
        scene_of = scenes()
        chosen = [co for lib, S in targets for co in chosen_coroutines(scene_of[int(S)], ids)]
        install_hooks()
        self.others = self.other_threads() if any(not isinstance(co, str) and co.patched() for co in chosen) else {}
        for co in chosen:
            if isinstance(co, str):  # skipped, as thread apply skips an unknown thread
                print("warning: %s" % co)
                continue
            self.apply_one(co, command, flags, len(targets) > 1, from_tty)

    @staticmethod
    def other_threads():
        """The registers of every thread but the selected one, for those a
        command writes to (see put_back_threads): a core's cannot be."""
        if is_core():
            return {}
        found = thread_registers(t for i in gdb.inferiors() for t in i.threads() if thread_key(t) != Selection.home)
        find_thread(Selection.home).switch()
        return found

    def apply_one(self, co, command, flags, name_schedule, from_tty):
        header = "\nCoroutine %d (%s%s):" % (co.id, co.state,
                                            ", schedule 0x%x" % int(co.scene.S) if name_schedule else "")
        quiet = "-q" in flags
        if "-s" in flags:  # its output, if any, once it has run without error
            try:
                output = co.with_frames(lambda: self.run(co, command, True, from_tty)) if co.frames else ""
            except gdb.GdbError:
                return
            if output and not quiet:
                print(header)
            gdb.write(output)
            return
        if not quiet:
            print(header)
        if co.frames is None:  # nothing to run the command among
            print(co.no_frames())
            return
        try:
            co.with_frames(lambda: self.run(co, command, False, from_tty))
        except gdb.GdbError as e:
            if "-c" not in flags:
                raise
            print(e)

    def run(self, co, command, to_string, from_tty):
        """The command, among co's frames: where they are put in place, only
        looking; what it changed put back, and said."""
        Applying.command, Applying.frames_of = command, co.name()
        try:
            if not co.patched():
                return gdb.execute(command, from_tty, to_string)
            error, effects = None, Effects()
            try:
                with effects:
                    try:
                        with LookingOnly():
                            output = gdb.execute(command, from_tty, to_string)
                    except gdb.error as e:
                        error = refusal(command, co.name(), e)
            finally:  # also when the command is interrupted
                self.put_back_threads(co, effects)
            error = error or effects_said(command, co.name(), effects)
            if error is not None:
                raise gdb.GdbError(error)
            return output
        finally:
            Applying.command = Applying.frames_of = None

    def put_back_threads(self, co, effects):
        """The registers a command wrote: all of the view's thread's put
        back as it ends, other threads' now, as they were before apply."""
        if effects.registers and isinstance(co.view, LiveView):
            co.view.written = list(co.view.saved_registers)  # all those that differ
        for key in effects.threads_written(Selection.home):
            thread = find_thread(key)
            if key in self.others and thread is not None:
                thread.switch()
                put_back_registers(self.others[key], list(self.others[key]))


RefusedInApply()
InfoCoroutines()
CoroutinePrefix()
CoroutineBacktrace()
CoroutineApply()
