# coroutine-gdb.py - gdb commands that show where suspended coroutines wait.
#
#   gdb -x debug/coroutine-gdb.py ./prog        (or `source` it in gdb)
#
#   info coroutines                          every open schedule and its coroutines
#   coroutine bt [SCHEDULE] ID [full|N]      a coroutine's whole backtrace
#   coroutine apply [SCHEDULE] ID COMMAND    any command, among its frames
#
# A suspended coroutine's frames are on no stack: its slice waits in its
# heap block and its registers in its context.  To show them, the commands
# put the slice back at its addresses on the run stack (keeping what is
# there), load the saved registers into the selected thread (keeping its
# own), run the command, and put everything back, also when the command
# fails or is interrupted.  A core file cannot be written: there they make a
# patched copy of it (the slice in its memory, the registers in the thread's
# NT_PRSTATUS note), look at the copy, and open the original again.
#
# What the build decided (the backend, where a slice lies in its block) the
# library tells in coroutine_debugger_view ("The debugger's view" at the end
# of coroutine.cpp), one per copy of the library in the process.

import os
import shutil
import struct
import tempfile

import gdb

# The library's frames above the one where a coroutine waits.
LIBRARY_FUNCTIONS = ("coroutine_yield", "coroutine_try_yield", "coroutine_switch_context",
                     "coroutine_start_context", "swapcontext", "getcontext", "setcontext")
READY, SUSPEND = 1, 3


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
        if frame.name() in LIBRARY_FUNCTIONS:
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


# ---- Finding a coroutine from the command's words ----------------------------

def eval_words(text):
    try:
        return gdb.parse_and_eval(text)
    except gdb.error as e:
        raise gdb.GdbError("%s: %s" % (text, e))


def split_schedule(words):
    """(library, schedule, the words after it): the schedule named by the
    first word if it is a struct schedule *, else the only open one."""
    schedules = open_schedules()
    if words:
        try:
            first = gdb.parse_and_eval(words[0])
        except gdb.error:
            first = None
        if first is not None and schedule_type_of(first):
            for lib, S in schedules:
                if int(S) == int(first):
                    return lib, S, words[1:]
            raise gdb.GdbError("%s (0x%x) is not an open schedule" % (words[0], int(first)))
        if first is not None and first.type.strip_typedefs().code not in (gdb.TYPE_CODE_INT, gdb.TYPE_CODE_BOOL):
            raise gdb.GdbError("%s is a %s, not a struct schedule * nor an id" % (words[0], first.type))
    made = [(lib, S) for lib, S in schedules if is_made(S)]
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


# ---- A coroutine's saved registers, per backend and architecture -------------

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


def asm_registers(C, a):
    """asm_switch.S's context: words, in the order of its layout table."""
    words = struct.unpack("<22Q", bytes(gdb.selected_inferior().read_memory(int(C), 8 * 22)))
    return [(n, words[w]) for n, w in ASM_WORDS[a] + ASM_FP_WORDS.get(a, [])]


def ucontext_registers(C, a):
    """glibc's ucontext_t, as swapcontext saved it."""
    mc = C["ctx"]["uc_mcontext"]
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


def saved_registers(lib, C):
    """{register: value} of C's context: what a resume would load."""
    if lib.backend not in CONTEXT_READERS:
        raise gdb.GdbError("coroutine commands do not read the %s backend's contexts" % lib.backend)
    regs = CONTEXT_READERS[lib.backend](C, arch())
    return dict((n, v & 0xFFFFFFFFFFFFFFFF) for n, v in regs)


def slice_in_block(lib, C, bottom, size):
    """Where C's block holds its slice: coroutine.cpp's slice_in_block."""
    start = int(C) + lib.coroutine_size
    if lib.shallow_slice > 0 and 0 < size <= lib.shallow_slice:
        return start
    return start + ((bottom - start) & (lib.slice_align - 1))


# ---- Putting a coroutine's frames in place, and back ----------------------------

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


def is_core():
    connection = gdb.selected_inferior().connection
    return connection is not None and connection.type == "core"


def run_stack_thread(S):
    """The thread whose stack pointer is on S's run stack: where its running
    coroutine's frames are; or None."""
    stack, top = int(S["stack"]), int(S["top"])
    for thread in gdb.selected_inferior().threads():
        thread.switch()
        sp = int(gdb.newest_frame().read_register("sp"))
        if stack <= sp < top:
            return thread
    return None


class Selection:
    """The selected thread and frame, put back on leaving."""

    def __enter__(self):
        thread = gdb.selected_thread()
        self.thread = thread.num if thread is not None else None
        try:
            self.level = gdb.selected_frame().level()
        except gdb.error:
            self.level = None
        return self

    def __exit__(self, *exc):
        gdb.invalidate_cached_frames()
        # By number: opening a core file again makes new thread objects.
        threads = [t for t in gdb.selected_inferior().threads() if t.num == self.thread]
        if threads:
            threads[0].switch()
            if self.level is not None:
                frame = gdb.newest_frame()
                for _ in range(self.level):
                    frame = frame.older() or frame
                frame.select()
        return False


class LiveView:
    """C's slice on the run stack and its registers in the selected thread,
    in a live process; what was there is kept and put back."""

    def __init__(self, lib, S, C):
        self.lib, self.S, self.C = lib, S, C

    def __enter__(self):
        inferior = gdb.selected_inferior()
        self.saved_bytes = None
        self.saved_regs = {}
        try:
            gdb.newest_frame().select()
            size = int(self.C["size"])
            bottom = int(self.S["top"]) - size
            if int(self.S["owner"]) != int(self.C) and size > 0:
                block = slice_in_block(self.lib, self.C, bottom, size)
                self.bottom = bottom
                self.saved_bytes = bytes(inferior.read_memory(bottom, size))
                inferior.write_memory(bottom, bytes(inferior.read_memory(block, size)))
            regs = saved_registers(self.lib, self.C)
            frame = gdb.newest_frame()
            self.saved_regs = dict((n, read_register(frame, n)) for n in regs)
            for name, value in regs.items():
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
        gdb.newest_frame().select()
        for name, value in self.saved_regs.items():
            write_register(name, value)
        gdb.invalidate_cached_frames()
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
    words = [saved_registers(lib, C).get(name, 0) for name in ("rip", "pc")]
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
    """C's frames in a core file: a patched copy is opened in its place (the
    slice in its memory, the registers in the selected thread's note), and
    the original opened again on leaving."""

    def __init__(self, lib, S, C):
        self.lib, self.S, self.C = lib, S, C

    def __enter__(self):
        self.original = CoreView.batch[0].original if CoreView.batch else core_file_name()
        self.thread_lwp = gdb.selected_thread().ptid[1]
        size = int(self.C["size"])
        bottom = int(self.S["top"]) - size
        memory = {}
        if int(self.S["owner"]) != int(self.C) and size > 0:
            block = slice_in_block(self.lib, self.C, bottom, size)
            memory[bottom] = bytes(gdb.selected_inferior().read_memory(block, size))
        regs = saved_registers(self.lib, self.C)
        self.dir = tempfile.mkdtemp(prefix="coroutine-gdb-")
        copy = os.path.join(self.dir, "core")
        shutil.copyfile(self.original, copy)
        if not patch_core(copy, self.thread_lwp, memory, regs, arch()):
            shutil.rmtree(self.dir, ignore_errors=True)
            raise gdb.GdbError("cannot patch a copy of core file %s (not a 64-bit little-endian ELF core "
                               "holding the run stack); the next best, the code addresses in its saved "
                               "slice, innermost first (some may be stale): %s"
                               % (self.original, next_best(self.lib, self.S, self.C)))
        self.open_core(copy)
        return self

    def open_core(self, path):
        confirm = gdb.parameter("confirm")
        gdb.execute("set confirm off")
        try:
            gdb.execute("core-file %s" % path, to_string=True)
        finally:
            gdb.execute("set confirm %s" % ("on" if confirm else "off"))
        for thread in gdb.selected_inferior().threads():
            if thread.ptid[1] == self.thread_lwp:
                thread.switch()

    def __exit__(self, *exc):
        try:
            if CoreView.batch is None:
                self.open_core(self.original)
            else:
                CoreView.batch.append(self)
        finally:
            shutil.rmtree(self.dir, ignore_errors=True)
        return False

    # Views taken one after the other (info coroutines) open the original
    # once, after the last: see in_one_batch.
    batch = None

    @staticmethod
    def back_to_original():
        """In a batch, the original core again (a running coroutine's
        frames are in it), if a patched copy is open."""
        if CoreView.batch:
            CoreView.batch[0].open_core(CoreView.batch[0].original)
            del CoreView.batch[:]


class in_one_batch:
    """Core views in a row: the original core is opened again once."""

    def __enter__(self):
        CoreView.batch = []

    def __exit__(self, *exc):
        views, CoreView.batch = CoreView.batch, None
        if views:
            views[0].open_core(views[0].original)
        return False


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


def state_of(lib, S, id, C):
    if id == int(S["running"]):
        return "running"
    status = int(C["status"])
    if status == READY:
        return "never started"
    if status == lib.suspended_elsewhere:
        return "suspended on another thread"
    return "suspended"


def with_frames(lib, S, id, C, action):
    """Runs action() with C's frames in the selected thread, and its
    waiting frame selected; puts everything back.  A failing command's
    error is one line, as if it had run alone."""
    try:
        return with_frames_raising(lib, S, id, C, action)
    except gdb.GdbError:
        raise
    except gdb.error as e:
        raise gdb.GdbError(str(e))


def with_frames_raising(lib, S, id, C, action):
    with Selection():
        if id == int(S["running"]):
            CoreView.back_to_original()
            if run_stack_thread(S) is None:
                raise gdb.GdbError("coroutine %d runs, but no thread's stack pointer is on its run stack" % id)
            waiting_frame(lib).select()
            return action()
        view = CoreView if is_core() else LiveView
        with view(lib, S, C):
            waiting_frame(lib).select()
            return action()


def start_of(C):
    func = int(C["start"]["func"])
    block = gdb.block_for_pc(func)
    name = block.function.print_name if block is not None and block.function else "0x%x" % func
    return "will start in %s" % name


# ---- The commands ----------------------------------------------------------------

class InfoCoroutines(gdb.Command):
    """Every open schedule and its coroutines: id, state, bytes saved, and where each waits.
Usage: info coroutines
Where a coroutine waits is the innermost frame outside the library."""

    def __init__(self):
        super().__init__("info coroutines", gdb.COMMAND_STACK)

    def invoke(self, arg, from_tty):
        if arg.strip():
            raise gdb.GdbError("info coroutines takes no arguments")
        schedules = open_schedules()
        if not schedules:
            print("No schedule is open.")
        with in_one_batch():
            for lib, S in schedules:
                self.show(lib, S)

    def show(self, lib, S):
        if not is_made(S):
            print("schedule 0x%x: being opened" % int(S))
            return
        n = int(S["nco"])
        print("schedule 0x%x: %d coroutine%s, %s backend" % (int(S), n, "" if n == 1 else "s", lib.backend))
        print("  %3s  %-27s %7s  %s" % ("id", "state", "saved", "where"))
        for id in range(int(S["cap"])):
            C = S["co"][id]
            if int(C) == lib.empty:
                continue
            state = state_of(lib, S, id, C)
            if state == "never started":
                where = start_of(C)
            else:
                where = with_frames(lib, S, id, C, lambda: describe(gdb.selected_frame(), state != "running"))
            # A running coroutine's last slice is no longer saved.
            saved = "-" if state == "running" else str(int(C["size"]))
            print("  %3d  %-27s %7s  %s" % (id, state, saved, where))


class CoroutinePrefix(gdb.Command):
    """Look at coroutines: coroutine bt, coroutine apply (and info coroutines)."""

    def __init__(self):
        super().__init__("coroutine", gdb.COMMAND_STACK, prefix=True)


class CoroutineBacktrace(gdb.Command):
    """A coroutine's whole backtrace, as bt prints a thread's.
Usage: coroutine bt [SCHEDULE] ID [full|N]
SCHEDULE is an expression giving a struct schedule *, needed only when more
than one schedule is open; full and N are bt's."""

    def __init__(self):
        super().__init__("coroutine bt", gdb.COMMAND_STACK)

    def invoke(self, arg, from_tty):
        lib, S, words = split_schedule(gdb.string_to_argv(arg))
        id, C = find_coroutine(lib, S, words[0] if words else None)
        options = words[1:]
        if any(o != "full" and not o.lstrip("-").isdigit() for o in options):
            raise gdb.GdbError("coroutine bt: after the id, only full or a number of frames")
        if state_of(lib, S, id, C) == "never started":
            print("coroutine %d has not started: it %s" % (id, start_of(C)))
            return
        with_frames(lib, S, id, C, lambda: gdb.execute(" ".join(["bt"] + options), from_tty))


class CoroutineApply(gdb.Command):
    """Runs a gdb command with a coroutine's frames in place.
Usage: coroutine apply [SCHEDULE] ID COMMAND
The frame where the coroutine waits (the innermost outside the library) is
selected; afterwards the program's stack and registers are as before."""

    def __init__(self):
        super().__init__("coroutine apply", gdb.COMMAND_STACK)

    def invoke(self, arg, from_tty):
        words = arg.split(None, 2)
        schedule_named = False
        if words:
            try:
                schedule_named = schedule_type_of(gdb.parse_and_eval(words[0]))
            except gdb.error:
                pass
        if not schedule_named:
            words = arg.split(None, 1)
        lib, S, rest = split_schedule(words[:1] if schedule_named else [])
        rest = words[1:] if schedule_named else words
        id, C = find_coroutine(lib, S, rest[0] if rest else None)
        if len(rest) < 2:
            raise gdb.GdbError("coroutine apply: which command? e.g. coroutine apply %d info locals" % id)
        if state_of(lib, S, id, C) == "never started":
            raise gdb.GdbError("coroutine %d has not started: it has no frames (it %s)" % (id, start_of(C)))
        with_frames(lib, S, id, C, lambda: gdb.execute(rest[1], from_tty))


InfoCoroutines()
CoroutinePrefix()
CoroutineBacktrace()
CoroutineApply()
