"""Build C source into a Python extension with cffi, once per machine: a content-keyed cache.

``load_c_module(name_hint, cdef, source)`` returns ``(ffi, lib)`` of a cffi API-mode
module (``ffi.cdef(cdef)``, ``ffi.set_source(name, source)``).  Modules are cached under
``$REVEC_CACHE_DIR`` (default ``~/.cache/revec``) in ``cmod/``, keyed by a SHA-256 of

* the source and the cdef,
* the compiler's identity (its ``--version`` output; the output is itself cached on
  disk keyed by the compiler executable's path, size and mtime, so a warm cache runs no
  compiler process at all),
* the flags (default ``-O3 -march=native``; ``$REVEC_CFLAGS`` or the ``cflags`` argument
  replace them; ``extra_compile_args`` are added), the libraries,
* the Python version and ABI tag and the cffi version,
* the CPU (vendor, model name and feature flags from ``/proc/cpuinfo``).

cffi writes the C wrapper (``ffi.emit_c_code``); the compiler is then run directly
(``$CC`` or ``cc``, ``-shared -fPIC``), not through setuptools' ``ffi.compile``: the flags in
the key are exactly the flags used (distutils would add Python's own build flags and may
pick a different compiler than the one hashed), compiler messages are captured for
errors, and a build costs no setuptools import.

A build runs in a private temporary directory under the cache, under an exclusive
``fcntl`` lock per key, and is installed with ``os.replace``: concurrent processes never
see a half-written module and compile each key once.  The module's size and SHA-256 are
recorded beside it (``<name>.sums``) before it is installed and verified before every
``dlopen``: a damaged entry (truncated, emptied, bit-flipped, or deleted with its record
left) is reported once on standard error and rebuilt under the lock, instead of
crashing the process (see :mod:`revec.toolchain.cache_check`).  Loaded modules are also memoised
per process.

The system headers every module includes are precompiled (gcc ``.gch``) once per
compiler, flags and CPU under ``pch/`` and verified the same way (see
:func:`precompiled_prelude`).

A cache that cannot be written is still read (a module built there is loaded as it is);
a build then goes to a private temporary cache, and a write that fails for want of room
names the file and the cache directory (see :mod:`revec.toolchain.cache_root`).  A warm
load writes nothing.

If the compiler cannot be found, a module already built for the same source, flags,
Python and CPU (by any compiler) is reused; only when there is none is it an error
(:class:`revec.errors.RevecError` naming what is missing).  Compile errors are
``RevecError`` carrying the compiler's message.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import importlib.machinery
import importlib.util
import io
import json
import os
import platform
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from revec.errors import RevecError
from revec.files import write_atomic
from revec.toolchain import cache_root
from revec.toolchain.cache_check import NO_RECORD, mismatch, warn_once, write_sums

DEFAULT_CFLAGS: tuple[str, ...] = ("-O3", "-march=native")
# Always passed: a shared object, and wrap-around signed arithmetic (revec's integer
# semantics are numpy's fixed-width wraparound).
FIXED_FLAGS: tuple[str, ...] = ("-shared", "-fPIC", "-fwrapv")
# cffi writes its Python-call wrappers after the module's own source.  They convert the
# arguments of a call made once per run, so their speed does not matter, but optimizing
# them is about 20% of a generated module's build (measured on a generated test program,
# 2-core AMD EPYC, gcc 12: 0.70 s -> 0.57 s).  gcc compiles what follows this pragma
# without optimization; other compilers (clang ignores GCC's optimize pragma) skip it.
GLUE_PRAGMA = ("\n/* revec: cffi's wrappers below are call glue, built unoptimized */\n"
               "#if defined(__GNUC__) && !defined(__clang__)\n"
               "#pragma GCC optimize (\"O0\")\n#endif\n")
_NO_COMPILER_HELP = "install gcc (Debian/Ubuntu: apt-get install gcc) or set CC"


@dataclass
class BuildStats:
    """What this process has done (for tests and diagnostics)."""

    compiles: int = 0          # compiler runs that built a module
    version_queries: int = 0   # ``cc --version`` runs (compiler identity)
    disk_hits: int = 0         # modules loaded from the on-disk cache
    memo_hits: int = 0         # modules returned from this process's memo
    rebuilt_damaged: int = 0   # damaged cache entries (checksum mismatch) rebuilt
    object_compiles: int = 0   # compiler runs that built a shared object (``objects``)


stats = BuildStats()
# Called with the compile command (a list of strings) just before each compiler run.
compile_hooks: list[Callable[[list[str]], None]] = []

_lock = threading.RLock()
_memo: dict[str, tuple[Any, Any]] = {}


def cache_dir() -> Path:
    """The cache root: ``$REVEC_CACHE_DIR`` or ``~/.cache/revec`` (where entries are
    looked up first; builds go to :func:`revec.toolchain.cache_root.writable`)."""
    return cache_root.configured()


def effective_cflags(cflags: Sequence[str] | None = None) -> list[str]:
    """The optimisation flags a build uses: the argument, else ``$REVEC_CFLAGS``, else default."""
    if cflags is not None:
        return list(cflags)
    env = os.environ.get("REVEC_CFLAGS")
    if env is not None and env.strip():
        return shlex.split(env)
    return list(DEFAULT_CFLAGS)


def compiler_command() -> list[str]:
    """``$CC`` split into words (``cc`` if unset)."""
    cc = os.environ.get("CC", "").strip() or "cc"
    words = shlex.split(cc)
    if not words:
        words = ["cc"]
    return words


def find_compiler() -> list[str] | None:
    """The compiler command with its executable resolved, or None if it does not exist."""
    words = compiler_command()
    exe = shutil.which(words[0])
    if exe is None:
        return None
    return [exe, *words[1:]]


def compiler_identity(cc: list[str]) -> str:
    """``cc --version`` output, cached on disk by the executable's path, size and mtime."""
    st = os.stat(cc[0])
    sig = hashlib.sha256(
        json.dumps([cc, st.st_size, st.st_mtime_ns]).encode()).hexdigest()[:24]
    for root in cache_root.roots():
        try:
            return (root / "compilers" / f"{sig}.txt").read_text()
        except OSError:
            pass
    stats.version_queries += 1
    try:
        res = subprocess.run([*cc, "--version"], capture_output=True, text=True, timeout=60)
    except OSError as exc:
        raise RevecError(f"C compiler {' '.join(cc)!r} cannot be run ({exc}): "
                         f"{_NO_COMPILER_HELP}") from exc
    if res.returncode != 0:
        raise RevecError(f"C compiler {' '.join(cc)!r} failed on --version: "
                         f"{(res.stderr or res.stdout).strip()[:500]}")
    ident = " ".join(cc) + "\n" + res.stdout
    root = cache_root.writable()
    with cache_root.cache_writes(root):
        write_atomic(root / "compilers" / f"{sig}.txt", ident)
    return ident


def cpu_identity() -> str:
    """Vendor, model and feature flags of the first CPU (what ``-march=native`` depends on)."""
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return f"{platform.machine()} {platform.processor()}"
    first = text.split("\n\n", 1)[0]
    keep = []
    for line in first.splitlines():
        key = line.split(":", 1)[0].strip()
        if key in ("vendor_id", "cpu family", "model", "model name", "flags", "Features",
                   "CPU implementer", "CPU part"):
            keep.append(line.strip())
    return platform.machine() + "\n" + "\n".join(keep)


def _python_identity() -> str:
    import cffi

    soabi = importlib.machinery.EXTENSION_SUFFIXES[0]
    return f"{sys.version} {sys.implementation.cache_tag} {soabi} cffi {cffi.__version__}"


def _safe_hint(name_hint: str) -> str:
    hint = re.sub(r"[^A-Za-z0-9_]", "_", name_hint)[:40] or "mod"
    if hint[0].isdigit():
        hint = "m" + hint
    return hint


def load_c_module(
    name_hint: str,
    cdef: str,
    source: str,
    *,
    extra_compile_args: Sequence[str] | None = None,
    libraries: Sequence[str] | None = None,
    cflags: Sequence[str] | None = None,
    include_dirs: Sequence[str] | None = None,
    objects: Sequence[tuple[str, str]] = (),
) -> tuple[Any, Any]:
    """Compile (or reuse) a cffi API-mode module and return its ``(ffi, lib)``.

    ``cdef`` declares what Python may call; ``source`` is the C code (it must define those
    functions).  ``cflags`` replaces the optimisation flags (see :func:`effective_cflags`),
    ``extra_compile_args`` adds to them, ``libraries`` are linked (``-l``).  ``objects``
    are ``(name, C source)`` pairs compiled with the module's flags into objects shared by
    every module that names the same source (see :func:`shared_object`) and linked in.
    """
    flags = effective_cflags(cflags) + list(extra_compile_args or ())
    libs = list(libraries or ())
    incs = [str(Path(d).resolve()) for d in (include_dirs or ())]
    hint = _safe_hint(name_hint)
    base_parts = {
        "source": source, "cdef": cdef, "flags": flags, "libraries": libs,
        "include_dirs": incs, "fixed": list(FIXED_FLAGS), "glue": GLUE_PRAGMA,
        "python": _python_identity(), "cpu": cpu_identity(),
        "objects": [[name, _digest({"source": text})] for name, text in objects],
    }
    base_key = _digest(base_parts)
    with _lock:
        cc = find_compiler()
        if cc is None:
            return _load_without_compiler(hint, base_key)
        full_key = _digest({**base_parts, "compiler": compiler_identity(cc)})
        modname = f"_revec_{hint}_{full_key[:20]}"
        if modname in _memo:
            stats.memo_hits += 1
            return _memo[modname]
        fname = modname + importlib.machinery.EXTENSION_SUFFIXES[0]
        # an entry already built is used where it is, even in a cache that cannot be
        # written; a build goes to the writable cache
        target = next((t for t in (r / "cmod" / fname for r in cache_root.roots())
                       if t.exists() and _entry_problem(t) is None), None)
        if target is not None:
            stats.disk_hits += 1
        else:
            base = cache_root.writable()
            root = base / "cmod"
            target = root / fname
            with cache_root.cache_writes(base):
                root.mkdir(parents=True, exist_ok=True)
                with file_lock(root / f"{modname}.lock"):
                    if _needs_build(target, "C module"):
                        objs = [shared_object(cc, flags, incs, name, text)
                                for name, text in objects]
                        _build(modname, cdef, source, cc, flags, libs, incs, target,
                               objs)
                    else:
                        stats.disk_hits += 1
        _point(target.parent / f"latest-{hint}-{base_key[:24]}", target.name)
        result = _import(modname, target)
        _memo[modname] = result
        return result


def clear_memo() -> None:
    """Forget the modules loaded and headers checked by this process (the disk cache is
    kept)."""
    with _lock:
        _memo.clear()
        _obj_memo.clear()
        _pch_memo.clear()
        _pch_wanted.clear()


def _point(pointer: Path, name: str) -> None:
    """Record ``name`` as the latest build of its source and flags (for a process
    without a compiler): written only when it changes, and skipped where the cache
    cannot be written or has no room (it only saves a rebuild)."""
    try:
        if pointer.read_text() == name:
            return
    except OSError:
        pass
    try:
        write_atomic(pointer, name)
    except OSError:
        pass


def _load_without_compiler(hint: str, base_key: str) -> tuple[Any, Any]:
    root = cache_dir() / "cmod"
    name = ""
    for folder in (r / "cmod" for r in cache_root.roots()):
        try:
            name = (folder / f"latest-{hint}-{base_key[:24]}").read_text().strip()
        except OSError:
            continue
        if name and (folder / name).exists():
            root = folder
            break
    target = root / name if name else None
    if target is not None and target.exists() and \
            _entry_problem(target) not in (None, NO_RECORD):
        raise RevecError(f"no C compiler found and the cached build {target} is damaged "
                         f"({_entry_problem(target)}): {_NO_COMPILER_HELP}")
    if target is None or not target.exists():
        words = compiler_command()
        raise RevecError(
            f"no C compiler found (looked for {words[0]!r}"
            f"{' from $CC' if os.environ.get('CC', '').strip() else ''} on PATH) and no "
            f"cached build of this module in {root}: {_NO_COMPILER_HELP}")
    modname = target.name.split(".", 1)[0]
    if modname in _memo:
        stats.memo_hits += 1
        return _memo[modname]
    stats.disk_hits += 1
    result = _import(modname, target)
    _memo[modname] = result
    return result


def _digest(parts: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()


def _build(modname: str, cdef: str, source: str, cc: list[str], flags: list[str],
           libs: list[str], incs: list[str], target: Path,
           objects: Sequence[Path] = ()) -> None:
    import sysconfig

    import cffi

    ffi = cffi.FFI()
    try:
        ffi.cdef(cdef)
    except Exception as exc:  # cffi.CDefError, pycparser errors
        raise RevecError(f"cffi cannot parse the declarations of {modname}: {exc}") from exc
    ffi.set_source(modname, source + GLUE_PRAGMA)
    tmp = Path(tempfile.mkdtemp(prefix=f".build-{modname}-", dir=target.parent))
    try:
        csrc = tmp / f"{modname}.c"
        with contextlib.redirect_stdout(io.StringIO()), _writing(csrc):
            ffi.emit_c_code(str(csrc))  # (cffi prints "generating ...")
        out = tmp / target.name
        py_inc = sysconfig.get_paths()["include"]
        plat_inc = sysconfig.get_paths()["platinclude"]
        inc_flags = [f"-I{py_inc}", *([f"-I{plat_inc}"] if plat_inc != py_inc else []),
                     *(f"-I{d}" for d in incs)]
        pch = precompiled_prelude(cc, flags, inc_flags, csrc.read_text())
        cmd = [*cc, *FIXED_FLAGS, *flags, *inc_flags, *pch, str(csrc),
               *(str(o) for o in objects), "-o", str(out), *(f"-l{lib}" for lib in libs)]
        stats.compiles += 1
        _compile(cmd, tmp, out, modname)
        # the checksum record first, then the module: a process killed in between
        # leaves a record without a module (a miss), never an unrecorded module
        write_sums(_sums_path(target), {target.name: out})
        os.replace(out, target)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _compile(cmd: list[str], cwd: Path, out: Path, what: str) -> None:
    """Run the compiler command ``cmd`` (after the compile hooks) that writes ``out``;
    a :class:`RevecError` with the compiler's message if it fails."""
    for hook in list(compile_hooks):
        hook(cmd)
    try:
        res = subprocess.run(cmd, capture_output=True, text=True, cwd=cwd)
    except OSError as exc:
        raise RevecError(f"C compiler {cmd[0]!r} cannot be run ({exc}): "
                         f"{_NO_COMPILER_HELP}") from exc
    if res.returncode != 0 or not out.exists():
        msg = (res.stderr + res.stdout).strip()
        root = cache_root.writable()
        full = cache_root.full_under(msg, root)
        if full is not None:  # not the program's fault: the cache's disk's
            raise cache_root.full_error(OSError(errno.ENOSPC, full), out, root)
        if len(msg) > 6000:
            msg = msg[:6000] + "\n... (truncated)"
        raise RevecError(f"C compilation of {what} failed (exit {res.returncode}):\n{msg}")


# Precompiled system headers.  gcc spends most of a generated module's build parsing
# headers ("phase parsing" about 70% of -ftime-report's total; <immintrin.h> under
# -march=native alone 0.41 s, Python.h 0.09 s), and every module includes the same ones.
# They are precompiled once per compiler, flags, include path and CPU into
# ``$REVEC_CACHE_DIR/pch/<key>/revec_sys.h.gch`` and passed with ``-include``: gcc reads
# the .gch when it is valid for the build's options and the text header otherwise, so a
# rejected .gch costs time, never correctness.  The header starts with cffi's own
# prologue of the module (up to ``#include <Python.h>``: the Py_LIMITED_API logic), so
# the module sees the macros it would see without it.  Measured on a generated module
# (2-core AMD EPYC, gcc 12): 1.25 s -> 0.88 s per build.  ``REVEC_PCH=0`` turns it off.
PCH_HEADERS: tuple[str, ...] = (
    "stddef.h", "stdint.h", "stdbool.h", "stdlib.h", "string.h", "math.h", "setjmp.h",
    "pthread.h", "sched.h", "stdatomic.h", "time.h")
_PCH_X86 = "#if defined(__x86_64__) || defined(__i386__)\n#include <immintrin.h>\n#endif\n"
_pch_memo: dict[str, list[str]] = {}
_pch_wanted: dict[str, int] = {}  # module builds per header key in this process


def precompiled_prelude(cc: list[str], flags: list[str], inc_flags: list[str],
                        csource: str) -> list[str]:
    """Compiler arguments that include the precompiled system headers (``[]`` when the
    compiler is not gcc, the prologue is not found, ``REVEC_PCH=0``, or the build of
    the header fails)."""
    if os.environ.get("REVEC_PCH", "1").strip() == "0":
        return []
    ident = compiler_identity(cc)
    # the "-include x.h finds x.h.gch" convention is gcc's
    if "Free Software Foundation" not in ident or "clang" in ident.lower():
        return []
    marker = "#include <Python.h>"
    end = csource.find(marker)
    if end < 0:
        return []
    header = ("/* generated by revec.toolchain.cbuild: the system headers of every "
              "generated module, precompiled */\n" + csource[:end + len(marker)] + "\n"
              + "".join(f"#include <{h}>\n" for h in PCH_HEADERS) + _PCH_X86)
    key = _digest({"header": header, "compiler": ident, "flags": flags,
                   "fixed": list(FIXED_FLAGS), "includes": inc_flags,
                   "cpu": cpu_identity()})[:24]
    with _lock:
        if key in _pch_memo:
            return _pch_memo[key]
        folder = cache_root.writable() / "pch" / key
        hfile, gch = folder / "revec_sys.h", folder / "revec_sys.h.gch"
        record = folder / "revec_sys.sums"
        files = {hfile.name: hfile, gch.name: gch}
        # Building the header costs about one module build: a process builds it at its
        # second module with these flags (a sweep, a test run), never for a lone
        # `revec run`, whose first build would only get slower.
        _pch_wanted[key] = _pch_wanted.get(key, 0) + 1
        if _pch_wanted[key] < 2 and not record.exists():
            return []
        folder.mkdir(parents=True, exist_ok=True)
        with file_lock(folder / "build.lock"):
            problem = mismatch(record, files) if gch.exists() or record.exists() else "new"
            if problem is not None:
                if problem not in ("new", NO_RECORD):
                    warn_once(str(gch), f"the precompiled header {gch} is damaged "
                              f"({problem}); rebuilding it")
                ok = _build_pch(cc, flags, inc_flags, header, folder)
            else:
                ok = True
        _pch_memo[key] = ["-include", str(hfile)] if ok else []
        return _pch_memo[key]


def _build_pch(cc: list[str], flags: list[str], inc_flags: list[str], header: str,
               folder: Path) -> bool:
    """Build ``revec_sys.h`` and its ``.gch`` in ``folder`` (record first, then the
    files, each by ``os.replace``); False if the compiler fails."""
    tmp = Path(tempfile.mkdtemp(prefix=".build-", dir=folder))
    try:
        th, tg = tmp / "revec_sys.h", tmp / "revec_sys.h.gch"
        with _writing(th):
            th.write_text(header)
        compile_flags = [f for f in FIXED_FLAGS if f != "-shared"]
        cmd = [*cc, *compile_flags, *flags, *inc_flags, "-x", "c-header", str(th),
               "-o", str(tg)]
        try:
            res = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp)
        except OSError:
            return False
        if res.returncode != 0 or not tg.exists():
            return False
        write_sums(folder / "revec_sys.sums", {th.name: th, tg.name: tg})
        os.replace(th, folder / th.name)
        os.replace(tg, folder / tg.name)
        return True
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


# Shared objects: C code that is the same for many modules (the schedule driver,
# revec.backends.c_driver) is compiled once per source, compiler, flags and CPU into
# ``$REVEC_CACHE_DIR/cobj/<name>-<key>.o`` and linked into each module that names it,
# instead of being compiled again inside every module.  Built and verified like a
# module: under a lock per key, a checksum record written before the object is
# installed, a damaged object reported once and rebuilt.
_obj_memo: dict[str, Path] = {}


def shared_object(cc: list[str], flags: list[str], incs: list[str], name: str,
                  source: str) -> Path:
    """The object file of ``source`` compiled with ``flags`` (built if needed)."""
    hint = _safe_hint(name)
    key = _digest({"source": source, "compiler": compiler_identity(cc), "flags": flags,
                   "fixed": list(FIXED_FLAGS), "include_dirs": incs,
                   "cpu": cpu_identity()})[:24]
    target = cache_root.writable() / "cobj" / f"{hint}-{key}.o"
    with _lock:
        if key in _obj_memo and target.exists():
            return _obj_memo[key]
        target.parent.mkdir(parents=True, exist_ok=True)
        with file_lock(target.with_suffix(".lock")):
            if _needs_build(target, "C object"):
                _build_object(cc, flags, incs, source, target)
        _obj_memo[key] = target
        return target


def _build_object(cc: list[str], flags: list[str], incs: list[str], source: str,
                  target: Path) -> None:
    tmp = Path(tempfile.mkdtemp(prefix=f".build-{target.stem}-", dir=target.parent))
    try:
        src, out = tmp / f"{target.stem}.c", tmp / target.name
        with _writing(src):
            src.write_text(source)
        compile_flags = [f for f in FIXED_FLAGS if f != "-shared"]
        cmd = [*cc, "-c", *compile_flags, *flags, *(f"-I{d}" for d in incs), str(src),
               "-o", str(out)]
        stats.object_compiles += 1
        _compile(cmd, tmp, out, target.name)
        write_sums(_sums_path(target), {target.name: out})
        os.replace(out, target)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _writing(path: Path) -> contextlib.AbstractContextManager[None]:
    """A write of ``path`` in the build cache: for want of room, a
    :class:`~revec.toolchain.cache_root.CacheFullError` naming it."""
    return cache_root.cache_writes(cache_root.writable(), path)


def _sums_path(target: Path) -> Path:
    return target.with_name(target.name.split(".", 1)[0] + ".sums")


def _entry_problem(target: Path) -> str | None:
    """Why the cache entry ``target`` must not be loaded (None: it may, or it is
    simply absent).  A recorded entry whose file is gone is a problem too."""
    record = _sums_path(target)
    if not target.exists():
        return "the file is missing" if record.exists() else None
    return mismatch(record, {target.name: target})


def _needs_build(target: Path, what: str) -> bool:
    """Whether the cache entry ``target`` (a ``what``) must be built, called under its
    lock: it is absent, or damaged (reported once, counted, and removed with its
    record)."""
    problem = _entry_problem(target)
    if target.exists() and problem is None:
        return False
    if problem is not None:
        if problem != NO_RECORD:
            stats.rebuilt_damaged += 1
            warn_once(str(target), f"the cached {what} {target} is damaged ({problem}); "
                      "rebuilding it")
        target.unlink(missing_ok=True)
        _sums_path(target).unlink(missing_ok=True)
    return True


def _import(modname: str, path: Path) -> tuple[Any, Any]:
    spec = importlib.util.spec_from_file_location(modname, path)
    if spec is None or spec.loader is None:  # pragma: no cover - defensive
        raise RevecError(f"cannot load the compiled module {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    sys.modules.setdefault(modname, module)
    return module.ffi, module.lib


class file_lock:
    """An exclusive ``fcntl.flock`` on ``path`` for the duration of a ``with``."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.fd = -1

    def __enter__(self) -> file_lock:
        self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        fcntl.flock(self.fd, fcntl.LOCK_EX)
        return self

    def __exit__(self, *exc: object) -> None:
        fcntl.flock(self.fd, fcntl.LOCK_UN)
        os.close(self.fd)

