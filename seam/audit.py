"""The worker's record of what ran: a CPython audit hook (PEP 578) that the student's code can
neither remove nor reach.

The watch (seam/honest.py), the stand-ins (seam/absent.py) and the static review (seam/review.py)
all live where the student's code can get at them first: objects in the worker's memory, a
profiler and mode classes it can rebind, a reply it can edit. An audit hook is different: once
added, no Python code can remove it, and CPython raises its events in C for what those routes
must do whatever the spelling or the caller (even C calling C through ``map``): a frame reached
(``sys._getframe``, a traceback's or generator's frame), gc's object lists, code run from text
(``exec``/``compile`` under any name), a module run from a file of no library and not of the
upload (a helper written to the scratch), the file of a module the rules took out, a profiler or
tracer set, a class of torch's or the grader's changed, a function's code replaced or made by
hand, ``ctypes``.

``install`` adds the hook in the worker before any student module is imported. The hook keeps
everything it uses in its closure (immutable values and C functions taken now), so rebinding
``os.write``, ``sys._getframe`` or anything of this module afterwards changes nothing it does;
nothing refers to the hook but the interpreter (gc's lists, the only way to reach it, are
themselves recorded, before they return). It calls no student code: it never formats, compares
or converts an argument of theirs but through C methods of exact built-in types.

Each event is attributed to the student's code on the stack: the frames are walked from the one
that raised it, passing over the frames of the few modules that do such things *for* their caller
(inspect, importlib's front door, pydoc, ...); if the first frame left is the student's (a file of
the upload, or of no library at all), the event is theirs. A library doing its own work (logging
finding its caller, typing, dataclasses, importlib's loader executing a module, torch) makes no
record. The position sent is the nearest frame of the upload's modules on the stack.

A record is one datagram on a SEQPACKET socket the grader holds the other end of: ``code\\0line\\0
file\\0detail`` (bytes; code from ``CODES``, detail an identifier or empty). The worker's syscall
filter (grader/sandbox/seccomp.py ``guard``) refuses to close, duplicate, replace, shut down or
reconfigure that descriptor, and a socket, unlike a pipe, cannot be reopened for reading through
/proc. What the student's code may still do is write datagrams of its own on it: those only add
notes against itself, and one the grader cannot parse is itself a note. The grader words every
note (grader/sandbox/record.py); nothing the worker sends is shown as text.
"""

import os
import sys

# record code -> (review kind, the grader's words for what ran); grader/sandbox/record.py reads this
CODES = {
    "frame": ("frames", "a frame reached (sys._getframe, a traceback's or a generator's frame)"),
    "gc": ("gc", "gc's object lists read (get_objects, get_referrers or get_referents)"),
    "exec": ("code from text", "code run from text (exec or eval)"),
    "compile": ("code from text", "code compiled from text (compile)"),
    "outside": ("imports by name", "a module run from a file outside the upload and the libraries"),
    "removed-run": ("removed code", "code of a module the honest-work rules take out of the sandbox ran"),
    "removed-read": ("removed code", "the file of a module the honest-work rules take out of the sandbox was opened"),
    "profiler": ("profilers", "sys.setprofile or sys.settrace called"),
    "torch-class": ("torch internals", "a class of torch's changed"),
    "seam-class": ("the grader", "a class of the grader's changed"),
    "library-class": ("code objects", "a library's class changed"),
    "function-code": ("code objects", "a function's code, defaults or globals replaced"),
    "code-made": ("code objects", "a code object or function made by hand"),
    "ctypes": ("ctypes", "ctypes used"),
    "charge": (None, "a forbidden call seen to run"),  # not a note: a charge (its detail: the function)
    # the watch's own checks (seam/honest.py ``check_in_place``), sent through the same hook
    "profiler-gone": ("profilers", "the watch's profiler was not in place while a function ran"),
    "modes-gone": ("torch internals", "the watch's torch modes were not in place while a function ran"),
    "kernels-back": ("removed code", "a kernel the honest-work rules refuse no longer refused"),
    "signals": ("frames", "a signal handler set (it is handed the frame it interrupts)"),
    "watch-changed": ("the grader", "the grader's rules or its watch changed"),
}
CHECK_EVENT = "seam.check"  # sys.audit(CHECK_EVENT, code): a check of the watch's that failed
CHARGE_EVENT = "seam.charge"  # sys.audit(CHARGE_EVENT, function): a forbidden call seen to run for it
MAX_RECORDS = 256           # distinct records a worker sends; then one "flood" datagram, then none

# modules whose functions do for their caller what the caller asked (reach a frame, import by a
# name): their frames are passed over, and the event is the caller's
PASSED_OVER = ("inspect", "importlib", "importlib.util", "importlib.machinery", "importlib.abc",
               "pydoc", "pkgutil", "runpy", "functools", "operator", "code", "codeop")
PASSED_OVER_FUNCTIONS = (("traceback", "walk_stack"), ("traceback", "walk_tb"))
FRAME_ATTRIBUTES = ("tb_frame", "gi_frame", "cr_frame", "ag_frame")
FUNCTION_ATTRIBUTES = ("__code__", "__defaults__", "__kwdefaults__", "__globals__")


def removed_files(modules) -> tuple[str, ...]:
    """The tails of the files of removed modules (``torch/optim/adam.py``), and of their caches
    (``torch/optim/__pycache__/adam.``): a path ending so is theirs, however it was spelled."""
    out = []
    for name in modules:
        parts = name.split(".")
        out.append("/".join(parts) + ".py")
        out.append("/".join(parts[:-1] + ["__pycache__", parts[-1] + "."]))
    return tuple(out)


def install(fd: int, upload: str, roots, removed) -> None:
    """Add the hook: records go to ``fd``; ``upload`` is the folder of the student's modules;
    ``roots`` the folders of the libraries (sys.path as the worker started, and the seam's);
    ``removed`` the names of the modules the rules took out (seam/absent.py)."""
    # everything the hook uses, taken now and kept in its closure
    write, getframe, join = os.write, sys._getframe, "".join
    module_of_type, name_of_type = type.__dict__["__module__"].__get__, type.__dict__["__name__"].__get__
    str_, bytes_, int_, type_, tuple_ = str, bytes, int, type, tuple
    function_type, code_type = type(install), type(install.__code__)
    upload = join((upload.rstrip("/"), "/"))
    roots = tuple(join((r.rstrip("/"), "/")) for r in roots if r)
    removed_tails = removed_files(removed)
    removed_cache = tuple(t for t in removed_tails if t.endswith("."))
    removed_sources = tuple(t for t in removed_tails if not t.endswith("."))
    passed_over = frozenset(PASSED_OVER)
    passed_over_functions = frozenset(PASSED_OVER_FUNCTIONS)
    watched = frozenset(("sys._getframe", "sys._current_frames", "gc.get_objects", "gc.get_referrers",
                         "gc.get_referents", "exec", "compile", "open", "sys.setprofile", "sys.settrace",
                         "object.__setattr__", "object.__delattr__", "object.__getattr__", "code.__new__",
                         "function.__new__", CHECK_EVENT, CHARGE_EVENT))
    frame_attributes, function_attributes = frozenset(FRAME_ATTRIBUTES), frozenset(FUNCTION_ATTRIBUTES)
    checks = frozenset(CODES)
    state = {"busy": False, "sent": set(), "count": 0, "names": {}}
    STUDENT, LIBRARY, PASS = 0, 1, 2

    def module_name(filename):
        """The dotted module of a library file, or None where it is of no library."""
        names = state["names"]
        if filename in names:
            return names[filename]
        name = None
        for root in roots:
            if filename.startswith(root):
                tail = filename[len(root):]
                if tail.endswith(".py"):
                    tail = tail[:-3]
                if tail.endswith("/__init__"):
                    tail = tail[:-9]
                name = tail.replace("/", ".")
                break
        names[filename] = name
        return name

    def whose(code):
        filename = code.co_filename
        if type_(filename) is not str_:
            return STUDENT
        if filename.startswith(upload):
            return STUDENT
        if filename.startswith("<"):
            return LIBRARY if filename.startswith("<frozen importlib") else PASS
        name = module_name(filename)
        if name is None:
            return STUDENT  # a file of no library: the scratch, a file they wrote
        if name in passed_over or (name, code.co_name) in passed_over_functions:
            return PASS
        return LIBRARY

    def position(frame):
        """(file, line) of the nearest frame of the upload on the stack, or ("", 0)."""
        while frame is not None:
            filename = frame.f_code.co_filename
            if type_(filename) is str_ and filename.startswith(upload):
                return filename[len(upload):], frame.f_lineno or 0
            frame = frame.f_back
        return "", 0

    def theirs(frame):
        """The student's frame that caused the event, or None (a library's own work)."""
        while frame is not None:
            kind = whose(frame.f_code)
            if kind == STUDENT:
                return frame
            if kind == LIBRARY:
                return None
            frame = frame.f_back
        return None

    def anywhere(frame):
        while frame is not None:
            if whose(frame.f_code) == STUDENT:
                return frame
            frame = frame.f_back
        return None

    def send(code, frame, detail=""):
        file, line = position(frame)
        key = (code, file, line, detail)
        if key in state["sent"]:
            return
        state["count"] += 1
        if state["count"] > MAX_RECORDS:
            if state["count"] == MAX_RECORDS + 1:
                write(fd, b"flood\x000\x00\x00")
            return
        state["sent"].add(key)
        record = "\x00".join((code, str_(line), file.replace("\x00", "?"), detail.replace("\x00", "?")))
        write(fd, record.encode("utf-8", "surrogatepass"))

    def identifier(value):
        """``value`` as a dotted identifier if it is one of built-in str, else "" (no text of theirs
        is ever shown: the grader words the note, and says at most such a name)."""
        if type_(value) is not str_ or len(value) > 80:
            return ""
        return value if value.replace(".", "_").isidentifier() else ""

    def path_of(path):
        if type_(path) is bytes_:
            path = path.decode("utf-8", "surrogateescape")
        if type_(path) is not str_:
            return None
        return path

    def hook(event, args):
        if type_(event) is not str_ or state["busy"]:
            return
        if event not in watched:
            # ctypes' events are many (ctypes.dlopen, .dlsym, .cdata, .call_function, ...): one test,
            # in this one hook (each hook is a Python call on every event the worker raises)
            if not event.startswith("ctypes."):
                return
        state["busy"] = True
        try:
            if event in watched:
                follow(event, args)
            else:
                caller = getframe(1)
                if theirs(caller) is not None:
                    send("ctypes", caller)
        except BaseException:  # never into their code: an event it could not follow is said instead
            try:
                write(fd, b"failed\x000\x00\x00")
            except BaseException:
                pass
        finally:
            state["busy"] = False

    def follow(event, args):
        caller = getframe(2)
        if event == "object.__getattr__":
            if type_(args[1]) is str_ and args[1] in frame_attributes and theirs(caller) is not None:
                send("frame", caller)
        elif event == "object.__setattr__" or event == "object.__delattr__":
            target, name = args[0], args[1]
            if issubclass(type_(target), type_):  # (never isinstance: it may ask them __class__)
                try:
                    module = module_of_type(target)
                except AttributeError:  # a static type's: no __module__ of its own
                    module = "builtins"
                module = module if type_(module) is str_ else ""
                if module == "submission" or module.startswith("submission."):
                    return
                if theirs(caller) is None:
                    return
                code = ("torch-class" if module == "torch" or module.startswith("torch.") else
                        "seam-class" if module == "seam" or module.startswith("seam.") else "library-class")
                name = name_of_type(target)
                send(code, caller, identifier(join((module, ".", name if type_(name) is str_ else "?"))))
            elif type_(target) is function_type and type_(name) is str_ and name in function_attributes:
                if name == "__code__" or whose(target.__code__) != STUDENT:
                    if theirs(caller) is not None:
                        send("function-code", caller)
        elif event == "exec":
            code = args[0]
            if type_(code) is not code_type:
                return
            filename = code.co_filename
            filename = filename if type_(filename) is str_ else ""
            if filename.endswith(removed_sources) and anywhere(caller) is not None:
                send("removed-run", caller)
            elif theirs(caller) is not None:
                send("exec", caller)
            elif whose(code) == STUDENT and not filename.startswith(upload) and anywhere(caller) is not None:
                send("outside", caller)
        elif event == "open":
            path = path_of(args[0])
            if path is not None and (path.endswith(removed_sources) or
                                     "__pycache__" in path and removed_cache and
                                     any(t in path for t in removed_cache)):
                if anywhere(caller) is not None:
                    send("removed-read", caller)
        elif event == "compile":
            if theirs(caller) is not None:
                send("compile", caller)
        elif event == CHARGE_EVENT:  # the watch's charge, kept where the reply cannot unsay it
            function = identifier(args[0]) if args else ""
            if function:
                send("charge", caller, function)
        elif event == CHECK_EVENT:
            code = args[0] if args else None
            if type_(code) is str_ and code in checks:
                send(code, caller)
        else:
            if theirs(caller) is None:
                return
            send("frame" if event.startswith("sys._") and "frame" in event else
                 "gc" if event.startswith("gc.") else
                 "profiler" if event in ("sys.setprofile", "sys.settrace") else "code-made", caller)

    sys.addaudithook(hook)
