#!/usr/bin/env python3
"""Checks which part of pp may include or call which (docs/Runtime.md, "Layers").

Fails, naming each offending file and line, when
  - the runtime core (runtime/lib/core) includes a driver header, or names a
    function the driver defines; with --core-lib and --driver-lib, also when
    the built core has an undefined symbol that only the driver defines;
  - the runtime backends (runtime/lib/backends) include the core or driver;
  - the compiler (lib/, include/pp/, tools/, its CMake include directories)
    reaches into the runtime tree (pprt/pprt.h, runtime/..., core/...);
  - the runtime includes MLIR, LLVM or compiler headers;
  - the shared ABI header (include/pp-abi) includes anything but C's own;
  - a compiler layer includes a pp header of a layer above it
    (docs/Architecture.md): the scheduling library includes only itself, the
    dialect's IR only itself and the schedule enums, the analyses only
    themselves, the IR, the utilities and the scheduling library, each phase
    of the passes (Transforms/<phase>) only itself and the layers below, no
    other phase, the stage-code passes only themselves and the IR, and the
    conversions and the schedule formats (Conversion, Target) no phase of
    the passes, no pipeline and no driver;
  - a phase's library, or the analyses', names another phase's library in
    its CMake (the pipelines compose the phases); with --phase-lib, also
    when a built phase has an undefined symbol that only another phase
    defines;
  - the scheduling library's CMake names a library or TableGen target of the
    dialect; with --scheduling-lib and --dialect-lib, also when the built
    library has an undefined symbol that only the dialect defines.
"""

import argparse
import os
import re
import subprocess
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]')
C_SOURCES = (".c", ".h", ".cu", ".cpp", ".inc")
COMPILER_SOURCES = (".cpp", ".h", ".td", ".inc", ".c")

# Headers of the runtime tree, as a compiler file would spell them.
RUNTIME_HEADER = re.compile(r"^(pprt/|runtime/|core/|backends/|driver/)")
# Headers of MLIR, LLVM and the compiler, which the runtime must not use.
COMPILER_HEADER = re.compile(r"^(mlir|llvm|mlir-c|llvm-c|pp)/")
# The compiler's folders (the fuzzers of tools/pp-fuzzers build runtime
# sources too, and are left out).
COMPILER_FOLDERS = ("lib", "include/pp", "tools/pp-compile", "tools/pp-opt",
                    "tools/pp-translate")
# The compiler's lower layers: (folders, the pp headers they may include).
COMPILER_LAYERS = (
    (("include/pp/Scheduling", "lib/Scheduling"),
     ("pp/Scheduling/",)),
    (("include/pp/Dialect/PP/IR", "lib/Dialect/PP/IR"),
     ("pp/Dialect/PP/IR/", "pp/Scheduling/ScheduleEnums.")),
    (("include/pp/StageCode", "lib/StageCode"),
     ("pp/StageCode/", "pp/Dialect/PP/IR/")),
    (("include/pp/Dialect/PP/Analysis", "lib/Dialect/PP/Analysis"),
     ("pp/Dialect/PP/Analysis/", "pp/Dialect/PP/IR/", "pp/Dialect/PP/Utils/",
      "pp/Scheduling/")),
    # The conversions and the schedule formats sit beside the passes: no
    # phase of them, no pipeline, no driver.
    (("include/pp/Conversion", "lib/Conversion"),
     ("pp/Conversion/", "pp/StageCode/", "pp/Dialect/PP/IR/",
      "pp/Dialect/PP/Analysis/", "pp/Dialect/PP/Utils/", "pp/Scheduling/")),
    (("include/pp/Target", "lib/Target"),
     ("pp/Target/", "pp/InitAll.h", "pp/Dialect/PP/IR/",
      "pp/Dialect/PP/Analysis/", "pp/Dialect/PP/Utils/", "pp/Scheduling/")),
)
# The phases of pp's passes, each one library (lib/Dialect/PP/Transforms).
PHASES = {"Import": "MLIRPPImport", "Differentiate": "MLIRPPDifferentiate",
          "Parallelize": "MLIRPPParallelize", "Schedule": "MLIRPPSchedule"}
PHASE_LIBRARY = re.compile(r"\b(" + "|".join(PHASES.values())
                           + r"|MLIRPPTransforms)\b")


def phase_layers():
    """(folders, allowed pp headers) of each phase: itself and the layers
    below it, never another phase."""
    below = ("pp/Dialect/PP/IR/", "pp/Dialect/PP/Analysis/",
             "pp/Dialect/PP/Utils/", "pp/Scheduling/")
    for phase in PHASES:
        yield ((f"include/pp/Dialect/PP/Transforms/{phase}",
                f"lib/Dialect/PP/Transforms/{phase}"),
               (f"pp/Dialect/PP/Transforms/{phase}/",) + below)
# C's own headers: what the ABI header may include.
C_HEADER = re.compile(r"^std\w*\.h$")


def files_under(root, folder, suffixes):
    base = os.path.join(root, folder)
    for dirpath, _, names in os.walk(base):
        for name in sorted(names):
            if name.endswith(suffixes):
                yield os.path.join(dirpath, name)


def includes(path):
    """(line number, included name) of every #include in `path`."""
    with open(path, encoding="utf-8", errors="replace") as f:
        for number, line in enumerate(f, 1):
            match = INCLUDE.match(line)
            if match:
                yield number, match.group(1)


def check_includes(root, folder, suffixes, forbidden, why, problems):
    for path in files_under(root, folder, suffixes):
        for number, name in includes(path):
            if forbidden(name):
                rel = os.path.relpath(path, root)
                problems.append(f"{rel}:{number}: includes '{name}': {why}")


def driver_functions(root):
    """Functions the driver defines (not static) or declares in its headers."""
    names = set()
    definition = re.compile(r"^(?!static\b)[A-Za-z_][\w \*]*?\b(pprt_\w+)\(")
    for path in files_under(root, "runtime/lib/driver", (".c", ".h")):
        with open(path, encoding="utf-8") as f:
            for line in f:
                match = definition.match(line)
                if match:
                    names.add(match.group(1))
    return names


def check_core_calls(root, problems):
    """Names of driver functions in the core's sources."""
    names = driver_functions(root)
    if not names:
        return
    called = re.compile(r"\b(" + "|".join(sorted(names)) + r")\b")
    for path in files_under(root, "runtime/lib/core", (".c", ".h")):
        with open(path, encoding="utf-8") as f:
            for number, line in enumerate(f, 1):
                match = called.search(line)
                if match:
                    rel = os.path.relpath(path, root)
                    problems.append(
                        f"{rel}:{number}: names '{match.group(1)}', a "
                        "function of the driver: the core calls no driver; "
                        "give it a slot of pprt_data_source or pprt_observer")


def symbols(nm, library):
    """(defined, undefined) external symbols of a static library."""
    out = subprocess.run([nm, "-g", library], check=True,
                         capture_output=True, text=True).stdout
    defined, undefined = set(), set()
    for line in out.splitlines():
        fields = line.split()
        if len(fields) == 2 and fields[0] == "U":
            undefined.add(fields[1])
        elif len(fields) == 3 and fields[1] not in ("U", "w", "v"):
            defined.add(fields[2])
    return defined, undefined


def check_core_symbols(nm, core_lib, driver_lib, problems):
    core_defined, core_undefined = symbols(nm, core_lib)
    driver_defined, _ = symbols(nm, driver_lib)
    for name in sorted((core_undefined - core_defined) & driver_defined):
        problems.append(f"{core_lib}: needs '{name}', which only the driver "
                        "defines: the core must link without the driver")


def check_scheduling_cmake(root, problems):
    """The scheduling library's CMake names no target of the dialect."""
    dialect_target = re.compile(r"\bMLIRPP\w*")
    for path in files_under(root, "lib/Scheduling", ("CMakeLists.txt",)):
        with open(path, encoding="utf-8") as f:
            for number, line in enumerate(f, 1):
                match = dialect_target.search(line.split("#", 1)[0])
                if match:
                    rel = os.path.relpath(path, root)
                    problems.append(
                        f"{rel}:{number}: names '{match.group(0)}': the "
                        "scheduling library links and depends on nothing of "
                        "the dialect")


def check_scheduling_symbols(nm, scheduling_lib, dialect_lib, problems):
    sched_defined, sched_undefined = symbols(nm, scheduling_lib)
    dialect_defined, _ = symbols(nm, dialect_lib)
    for name in sorted((sched_undefined - sched_defined) & dialect_defined):
        problems.append(f"{scheduling_lib}: needs '{name}', which only the "
                        "dialect defines: the scheduling library must link "
                        "without the dialect")


def check_phase_cmake(root, problems):
    """No phase's library, nor the analyses', links another phase's."""
    owners = [(f"lib/Dialect/PP/Transforms/{phase}", library)
              for phase, library in PHASES.items()]
    owners.append(("lib/Dialect/PP/Analysis", None))
    for folder, own in owners:
        for path in files_under(root, folder, ("CMakeLists.txt",)):
            with open(path, encoding="utf-8") as f:
                for number, line in enumerate(f, 1):
                    for match in PHASE_LIBRARY.finditer(line.split("#", 1)[0]):
                        if match.group(1) == own:
                            continue
                        rel = os.path.relpath(path, root)
                        problems.append(
                            f"{rel}:{number}: names '{match.group(1)}': a "
                            "phase of the passes links no other phase, and "
                            "the analyses none (the pipelines compose them)")


def check_phase_symbols(nm, phase_libs, problems):
    """No built phase needs a symbol only another phase defines."""
    built = {phase: symbols(nm, library) for phase, library in phase_libs}
    for phase, (defined, undefined) in built.items():
        needed = undefined - defined
        for other, (other_defined, _) in built.items():
            if other == phase:
                continue
            for name in sorted(needed & other_defined):
                problems.append(
                    f"{dict(phase_libs)[phase]}: needs '{name}', which the "
                    f"{other} phase defines: a phase links no other phase")


def check_cmake_include_dirs(root, problems):
    """The compiler's CMake files never add the runtime's include paths."""
    listed = [os.path.join(root, "CMakeLists.txt")]
    for folder in COMPILER_FOLDERS:
        listed += files_under(root, folder, ("CMakeLists.txt",))
    runtime_dir = re.compile(r"runtime/(include|lib)")
    for path in listed:
        with open(path, encoding="utf-8") as f:
            for number, line in enumerate(f, 1):
                code = line.split("#", 1)[0]
                if "include_directories" in code and runtime_dir.search(code):
                    rel = os.path.relpath(path, root)
                    problems.append(
                        f"{rel}:{number}: adds the runtime's include path to "
                        "compiler targets; include pp-abi/pprt_abi.h instead")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--root", default=os.path.join(os.path.dirname(__file__),
                                                  ".."))
    p.add_argument("--core-lib", help="the built core (libpprt_core.a)")
    p.add_argument("--driver-lib", help="the built driver (libpprt_driver.a)")
    p.add_argument("--scheduling-lib",
                   help="the built scheduling library (libPPScheduling.a)")
    p.add_argument("--dialect-lib", help="the built dialect (libMLIRPP.a)")
    p.add_argument("--phase-lib", action="append", default=[],
                   metavar="PHASE=LIBRARY",
                   help="a built phase of the passes, e.g. "
                   "Schedule=libMLIRPPSchedule.a (repeatable)")
    p.add_argument("--nm", default="nm")
    args = p.parse_args()
    root = os.path.abspath(args.root)
    problems = []
    check_includes(root, "runtime/lib/core", C_SOURCES,
                   lambda name: name.startswith("driver/"),
                   "the core includes no driver header", problems)
    check_includes(root, "runtime/lib/backends", C_SOURCES,
                   lambda name: re.match(r"^(core|driver)/", name),
                   "backends include neither the core nor the driver",
                   problems)
    for folder in COMPILER_FOLDERS:
        check_includes(root, folder, COMPILER_SOURCES,
                       lambda name: RUNTIME_HEADER.match(name),
                       "the compiler does not include the runtime tree; the "
                       "ABI constants are in pp-abi/pprt_abi.h", problems)
    check_includes(root, "runtime", C_SOURCES,
                   lambda name: COMPILER_HEADER.match(name),
                   "the runtime includes no MLIR, LLVM or compiler header",
                   problems)
    check_includes(root, "include/pp-abi", C_SOURCES,
                   lambda name: not C_HEADER.match(name),
                   "the ABI header is plain C shared by compiler and "
                   "runtime", problems)
    for folders, allowed in COMPILER_LAYERS + tuple(phase_layers()):
        for folder in folders:
            check_includes(
                root, folder, COMPILER_SOURCES,
                lambda name: (name.startswith("pp/")
                              and not name.startswith(allowed)),
                "a lower layer of the compiler includes only "
                + " and ".join(allowed) + " (docs/Architecture.md)", problems)
    check_core_calls(root, problems)
    check_cmake_include_dirs(root, problems)
    check_scheduling_cmake(root, problems)
    check_phase_cmake(root, problems)
    if args.core_lib and args.driver_lib:
        check_core_symbols(args.nm, args.core_lib, args.driver_lib, problems)
    if args.scheduling_lib and args.dialect_lib:
        check_scheduling_symbols(args.nm, args.scheduling_lib,
                                 args.dialect_lib, problems)
    if args.phase_lib:
        check_phase_symbols(args.nm, [tuple(entry.split("=", 1))
                                      for entry in args.phase_lib], problems)
    for problem in problems:
        print(problem, file=sys.stderr)
    if problems:
        print(f"check-deps: {len(problems)} dependency violation(s)",
              file=sys.stderr)
        return 1
    print("check-deps: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
