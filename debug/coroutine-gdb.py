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
# its own), run the command, and put everything back, also when the command
# fails or is interrupted.  A core file cannot be written: there they make a
# patched copy of it (the slice in its memory, the registers in the thread's
# NT_PRSTATUS note), look at the copy, and open the original again.
#
# So that nothing they do changes what the program computes, they work only
# while every thread is stopped (any thread may resume a schedule, and so
# run on its run stack), and a command under `coroutine apply` may only
# look: what would resume the program or pop frames is refused by a hook
# before it runs (the program would run the coroutine outside the library);
# a function call in the program is refused (it would run on the run stack,
# over the bytes of the coroutines that own it, while the library says that
# another coroutine runs; and gdb lets every thread run during a call); so
# is a write to memory (the frames are a copy, put back afterwards), and a
# write to a register is undone and said.
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

# The library's frames above the one where a coroutine waits.
LIBRARY_FUNCTIONS = ("coroutine_yield", "coroutine_try_yield", "coroutine_switch_context",
                     "coroutine_start_context", "swapcontext", "getcontext", "setcontext")
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
    """A schedule being opened is listed before its run stack is mapped."""
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
    id = int(value)
    if not is_made(S):
        raise gdb.GdbError("schedule 0x%x is still being opened" % int(S))
    cap = int(S["cap"])
    if not 0 <= id < cap:
        raise gdb.GdbError("coroutine %d is out of range: schedule 0x%x has ids [0, %d)" % (id, int(S), cap))
    C = S["co"][id]
    if int(C) == lib.empty:
        raise gdb.GdbError("coroutine %d: the slot is empty (no coroutine)" % id)
    return id, C


def coroutines_of(lib, S):
    """(id, C) for each coroutine of a made schedule, in id order."""
    return [(id, S["co"][id]) for id in range(int(S["cap"])) if int(S["co"][id]) != lib.empty]


# ---- A saved context's registers, per backend and architecture -------------------

# asm_switch.S's context tables: the word each register is saved in.
ASM_WORDS = {
    "x86_64": [("rbx", 0), ("rbp", 1), ("r12", 2), ("r13", 3), ("r14", 4), ("r15", 5),
               ("rsp", 6), ("rip", 7)],
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


class Scene:
    """One schedule as the library's state and the threads show it: which
    coroutine runs where, and what is being switched when a thread is
    stopped inside the library, between the two."""

    def __init__(self, lib, S, stack_pointers, schedules):
        self.lib, self.S = lib, S
        self.switch = self.thread = self.main_of = None
        self.running, self.owner = -1, 0
        if not is_made(S):
            return
        stack, top = int(S["stack"]), int(S["top"])
        self.thread = next((t for t, sp in stack_pointers if stack <= sp < top), None)
        self.running = int(S["running"])
        self.owner = int(S["owner"])
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
            # ...or main is switching to it.
            if self.main_of is None:
                starting = int(running_C["status"]) == READY or int(running_C["size"]) == 0
                self.switch = "main is %s coroutine %d" % ("starting" if starting else "resuming", self.running)
        elif self.running < 0 and self.thread is not None:
            ids = [id for id, C in coroutines_of(lib, S) if int(C) == self.owner]
            self.switch = ("coroutine %d is yielding to main" % ids[0] if ids else
                           "a finished coroutine is leaving the run stack") + on_thread

    def state(self, id, C):
        """(state, Frames or None) of coroutine id."""
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


class RegisterWrites:
    """The names of the registers that gdb writes while it is entered (its
    register_changed events, which every assignment to one sends)."""

    def __enter__(self):
        self.numbers = []
        gdb.events.register_changed.connect(self.note)
        return self

    def note(self, event):
        self.numbers.append(event.regnum)

    def __exit__(self, *exc):
        gdb.events.register_changed.disconnect(self.note)
        return False

    def names(self):
        table = {}
        for line in gdb.execute("maintenance print registers", to_string=True).splitlines()[1:]:
            words = line.split()
            if len(words) > 1 and words[1].isdigit():
                table[int(words[1])] = words[0]
        return [table.get(n, str(n)) for n in sorted(set(self.numbers))]


def is_core():
    connection = gdb.selected_inferior().connection
    return connection is not None and connection.type == "core"


class Selection:
    """The selected thread and frame, put back on leaving."""

    def __enter__(self):
        thread = gdb.selected_thread()
        # By LWP: opening a core file again makes new thread objects.
        self.lwp = thread.ptid[1] if thread is not None else None
        try:
            self.level = gdb.selected_frame().level()
        except gdb.error:
            self.level = None
        return self

    def __exit__(self, *exc):
        gdb.invalidate_cached_frames()
        threads = [t for t in gdb.selected_inferior().threads() if t.ptid[1] == self.lwp]
        if threads and threads[0].is_valid() and not threads[0].is_running():
            threads[0].switch()
            if self.level is not None:
                frame = gdb.newest_frame()
                for _ in range(self.level):
                    frame = frame.older() or frame
                frame.select()
        return False


class LiveView:
    """A coroutine's frames in a live process: its slice on the run stack
    (unless it is there already), the registers of its saved context in the
    selected thread; what was there kept and put back."""

    def __init__(self, lib, S, C, frames):
        self.lib, self.S, self.C, self.frames = lib, S, C, frames

    def __enter__(self):
        inferior = gdb.selected_inferior()
        self.saved_bytes = None
        gdb.newest_frame().select()
        regs = saved_registers(self.frames.lib, self.frames.ctx)
        self.saved_registers = all_registers(regs)
        # What is put back: the registers loaded, or all (see CoroutineApply.run).
        self.written = []
        try:
            if self.frames.from_block:
                size = int(self.C["size"])
                self.bottom = int(self.S["top"]) - size
                block = slice_in_block(self.lib, self.C, self.bottom, size)
                self.saved_bytes = bytes(inferior.read_memory(self.bottom, size))
                inferior.write_memory(self.bottom, bytes(inferior.read_memory(block, size)))
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
        # The bytes first: writing registers forgets the frames gdb
        # unwound through the coroutine's.
        if self.saved_bytes is not None:
            gdb.selected_inferior().write_memory(self.bottom, self.saved_bytes)
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


def patch_core(path, lwp, memory, regs, a):
    """Writes memory ({address: bytes}) and thread lwp's registers into the
    core file at path.  False where the file does not say how."""
    with open(path, "r+b") as f:
        head = f.read(64)
        if head[:4] != b"\x7fELF" or head[4] != 2 or head[5] != 1:
            return False
        phoff, = struct.unpack_from("<Q", head, 32)
        phentsize, phnum = struct.unpack_from("<HH", head, 54)
        f.seek(phoff)
        table = f.read(phentsize * phnum)
        segments = [struct.unpack_from("<IIQQQQQ", table, i * phentsize) for i in range(phnum)]
        for address, data in memory.items():
            for ptype, _, offset, vaddr, _, filesz, _ in segments:
                if ptype == PT_LOAD and vaddr <= address and address + len(data) <= vaddr + filesz:
                    f.seek(offset + address - vaddr)
                    f.write(data)
                    break
            else:
                return False
        done = False
        for ptype, _, offset, _, _, filesz, _ in segments:
            if ptype != PT_NOTE:
                continue
            f.seek(offset)
            notes = f.read(filesz)
            at, thread_here = 0, False
            while at + 12 <= len(notes):
                namesz, descsz, ntype = struct.unpack_from("<III", notes, at)
                desc = at + 12 + (namesz + 3) // 4 * 4
                if ntype == NT_PRSTATUS:
                    thread_here = struct.unpack_from("<i", notes, desc + PR_PID)[0] == lwp
                    if thread_here:
                        for name, value in regs.items():
                            if name in PR_REG_INDEX[a]:
                                f.seek(offset + desc + PR_REG + 8 * PR_REG_INDEX[a][name])
                                f.write(struct.pack("<Q", value))
                        done = True
                elif ntype == NT_PRFPREG and thread_here and a == "aarch64":
                    for name, value in regs.items():
                        if name.startswith("d"):
                            f.seek(offset + desc + 16 * int(name[1:]))
                            f.write(struct.pack("<Q", value))
                at = desc + (descsz + 3) // 4 * 4
        return done


def next_best(lib, S, C):
    """Where no view can be had: the resume address, then every word of
    the saved slice that points into a function with a line, as
    "function (file:line)"; return addresses, or stale words that look
    like them."""
    size = int(C["size"])
    bottom = int(S["top"]) - size
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
    """A coroutine's frames in a core file: a patched copy is opened in its
    place (the slice in its memory, the registers in the selected thread's
    note).  The original is opened again once the command is done (see
    OriginalCore), or before a view needs it."""

    def __init__(self, lib, S, C, frames):
        self.lib, self.S, self.C, self.frames = lib, S, C, frames

    def __enter__(self):
        original = OriginalCore.path()
        self.thread_lwp = gdb.selected_thread().ptid[1]
        memory = {}
        if self.frames.from_block:
            size = int(self.C["size"])
            bottom = int(self.S["top"]) - size
            memory[bottom] = bytes(gdb.selected_inferior().read_memory(
                slice_in_block(self.lib, self.C, bottom, size), size))
        regs = saved_registers(self.frames.lib, self.frames.ctx)
        self.dir = tempfile.mkdtemp(prefix="coroutine-gdb-")
        try:
            copy = os.path.join(self.dir, "core")
            shutil.copyfile(original, copy)
            if not patch_core(copy, self.thread_lwp, memory, regs, arch()):
                raise gdb.GdbError("cannot patch a copy of core file %s (not a 64-bit little-endian ELF core "
                                   "holding the run stack); the next best, the code addresses in its saved "
                                   "slice, innermost first (some may be stale): %s"
                                   % (original, next_best(self.lib, self.S, self.C)))
            open_core(copy, self.thread_lwp)
        except BaseException:
            shutil.rmtree(self.dir, ignore_errors=True)
            raise
        return self

    def __exit__(self, *exc):
        shutil.rmtree(self.dir, ignore_errors=True)
        return False


def open_core(path, lwp):
    confirm = gdb.parameter("confirm")
    gdb.execute("set confirm off")
    try:
        gdb.execute("core-file %s" % path, to_string=True)
    finally:
        gdb.execute("set confirm %s" % ("on" if confirm else "off"))
    for thread in gdb.selected_inferior().threads():
        if thread.ptid[1] == lwp:
            thread.switch()


class OriginalCore:
    """While a command runs on a core file: the original's name, opened
    again once, when the command is done (views in a row open their copies
    one after the other), or when a view needs it (the running coroutine's
    frames are in it)."""

    original = None
    copy_open = False

    def __enter__(self):
        OriginalCore.original = core_file_name() if is_core() else None
        OriginalCore.copy_open = False

    def __exit__(self, *exc):
        try:
            OriginalCore.back()
        finally:
            OriginalCore.original = None
        return False

    @staticmethod
    def path():
        OriginalCore.copy_open = True
        return OriginalCore.original

    @staticmethod
    def back():
        if OriginalCore.copy_open:
            OriginalCore.copy_open = False
            open_core(OriginalCore.original, gdb.selected_thread().ptid[1])


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


class Applying:
    """While a command runs under coroutine apply: what it is and whose
    frames it sees, for the hooks' refusals."""
    command = None
    frames_of = None


class RefusedInApply(gdb.Function):
    """$_coroutine_refuses(COMMAND): refuses COMMAND inside coroutine apply,
    in one line (the hooks of REFUSED_COMMANDS call it); 0 elsewhere."""

    def __init__(self):
        super().__init__("_coroutine_refuses")

    def invoke(self, command):
        if Applying.command is not None:
            raise gdb.GdbError(refused_command(command.string(), Applying.frames_of))
        return 0


def refused_command(command, who):
    """The line that refuses command among who's frames."""
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
    """Each refused command's hook, ours first; a hook of the user's own
    is kept after it.  Run before each coroutine apply, so that a hook
    defined since is taken in too."""
    defined = user_commands()
    confirm = gdb.parameter("confirm")
    gdb.execute("set confirm off")
    try:
        for command in REFUSED_COMMANDS:
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
        self.settings = dict((name, gdb.parameter(name)) for name in ("may-call-functions", "may-write-memory"))
        for name in self.settings:
            gdb.execute("set %s off" % name)

    def __exit__(self, *exc):
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
    runs).  If the entry tail-called another, that one: it replaced it."""
    entry = None
    try:
        while frame is not None and not lib.owns_frame(frame):
            entry, frame = frame, frame.older()
    except gdb.error:
        frame = None
    if entry is None or frame is None:  # the unwinding stopped short of the library
        return "?"
    return entry.name() or "??"


def start_of(C):
    func = int(C["start"]["func"])
    block = gdb.block_for_pc(func)
    return short_name(block.function.print_name) if block is not None and block.function else "0x%x" % func


class Coroutine:
    """One coroutine of a scene: its state, and a way to its frames."""

    def __init__(self, scene, id, C):
        self.scene, self.id, self.C = scene, id, C
        self.state, self.frames = scene.state(id, C)

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
        """action() with its frames in the selected thread, the frame where
        it waits selected; everything put back.  A failing command's error
        is one line, as if it had run alone."""
        lib = self.scene.lib
        try:
            if self.frames.lwp is not None:
                OriginalCore.back()
                thread_of(self.frames.lwp).switch()
                waiting_frame(lib).select()
                return action()
            view = CoreView if is_core() else LiveView
            with view(lib, self.scene.S, self.C, self.frames) as self.view:
                waiting_frame(lib).select()
                return action()
        except gdb.GdbError:
            raise
        except gdb.error as e:
            raise gdb.GdbError(str(e))


def looking(command_name, body):
    """Runs a coroutine command: every thread stopped, nothing nested, the
    selected thread and frame (and a core file's original) put back."""
    if Applying.command is not None:
        raise gdb.GdbError("%s: not inside coroutine apply (%s's frames are in place)"
                           % (command_name, Applying.frames_of))
    libraries()
    check_all_stopped(command_name)
    with Selection():
        with OriginalCore():
            return body()


# ---- The commands ----------------------------------------------------------------

class InfoCoroutines(gdb.Command):
    """Every open schedule and its coroutines: id, state, bytes saved, entry function, and where each waits.
Usage: info coroutines
Where a coroutine waits is the innermost frame outside the library; its entry
is the outermost (the function it started in).  Stopped inside the library,
a line under the schedule says what is being switched."""

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
            saved = "-" if co.state == "running" else str(int(C["size"]))
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
IDs are numbers and ranges (0 2-4); all is every coroutine of SCHEDULE, or
of every open schedule.  The frame where each waits (the innermost outside
the library) is selected; frame apply level N COMMAND reaches an outer one.
-q prints no header before each, -c goes on after an error, -s skips the
coroutines where COMMAND fails or prints nothing.
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
        chosen = []
        for lib, S in targets:
            pairs = coroutines_of(lib, S) if ids == "all" else [find_coroutine(lib, S, str(id)) for id in ids]
            chosen += [Coroutine(scene_of[int(S)], id, C) for id, C in pairs]
        install_hooks()
        for co in chosen:
            self.apply_one(co, command, flags, len(targets) > 1, from_tty)

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

    @staticmethod
    def run(co, command, to_string, from_tty):
        """The command, among co's frames: where they are put in place, only
        looking, and no register changed (else undone, and said)."""
        Applying.command, Applying.frames_of = command, co.name()
        try:
            if not co.patched():
                return gdb.execute(command, from_tty, to_string)
            writes, error = RegisterWrites(), None
            try:
                with LookingOnly(), writes:
                    output = gdb.execute(command, from_tty, to_string)
            except gdb.error as e:
                error = refusal(command, co.name(), e)
            finally:
                if writes.numbers and isinstance(co.view, LiveView):
                    co.view.written = list(co.view.saved_registers)  # all those that differ
            if writes.numbers and error is None:
                names = writes.names()
                error = ("coroutine apply: %s wrote to register%s %s: undone (%s's registers are a copy, put back "
                         "afterwards)" % (command, "" if len(names) == 1 else "s", ", ".join(names), co.name()))
            if error is not None:
                raise gdb.GdbError(error)
            return output
        finally:
            Applying.command = Applying.frames_of = None


RefusedInApply()
InfoCoroutines()
CoroutinePrefix()
CoroutineBacktrace()
CoroutineApply()
