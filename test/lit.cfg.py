# Lit configuration for pp's regression tests.

import os
import shutil
import subprocess

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "PP"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test", ".json", ".csv"]
# test/Fuzz holds the fuzzers' seed and finding inputs, test/lib the
# test passes' sources: neither holds tests.
config.excludes = ["lit.cfg.py", "lit.site.cfg.py", "Inputs", "Fuzz", "lib", "CMakeLists.txt", "lit.local.cfg"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.pp_obj_root, "test")

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%pp_src_root", config.pp_src_root))
config.substitutions.append(("%pp_obj_root", config.pp_obj_root))
# Libraries built for tests, such as the example pass plugin.
config.substitutions.append(("%pp_libs", os.path.join(config.pp_obj_root, "lib")))

llvm_config.use_default_substitutions()
# pp-compile links through mpicc, which needs the system tools on PATH;
# sanitized runs turn off UCX's mmap hook (scripts/sanitize.sh).
llvm_config.with_system_environment(["PATH", "HOME", "UCX_MEM_MMAP_HOOK_MODE"])
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.pp_tools_dir, append_path=True)

# `--param pp_compile_args=--gemm=library` compiles every program of the
# run with those options (ctest runs the gradient checks once per GEMM path).
pp_compile_args = lit_config.params.get("pp_compile_args", "").split()
tools = [
    ToolSubst("pp-opt", unresolved="fatal"),
    ToolSubst("pp-translate", unresolved="ignore"),
    ToolSubst("pp-compile", unresolved="ignore", extra_args=pp_compile_args),
    ToolSubst("pp-calibrate", unresolved="ignore"),
]
llvm_config.add_tool_substitutions(tools, [config.pp_tools_dir])

# Optional tools become features so tests that need them skip, not break.
if shutil.which("mpirun") or (config.mpiexec and os.path.exists(config.mpiexec)):
    config.available_features.add("mpi")
if shutil.which("python3"):
    config.available_features.add("python3")
# A CUDA toolkit with ptxas (the runtime's, which pp-lower-to-cuda uses):
# tests that build cubins need it.
if config.cuda_toolkit and os.path.exists(
        os.path.join(config.cuda_toolkit, "bin", "ptxas")):
    config.available_features.add("cuda")
# LLVM's NVPTX back end, which pp-lower-to-cuda generates kernels with.
llc = os.path.join(config.llvm_tools_dir, "llc")
if os.path.exists(llc) and "nvptx64" in subprocess.run(
        [llc, "--version"], capture_output=True, text=True).stdout:
    config.available_features.add("nvptx")
# AddressSanitizer builds (PP_SANITIZE): LeakSanitizer reports what a
# compile that recovered from an LLVM fatal error leaked by design.
if "address" in config.pp_sanitize:
    config.available_features.add("asan")
mlir_runner = os.path.join(config.llvm_tools_dir, "mlir-runner")
if os.path.exists(mlir_runner):
    config.available_features.add("mlir-runner")
    config.substitutions.append(("%mlir_runner", mlir_runner))
    config.substitutions.append(
        ("%mlir_lib_dir", os.path.join(os.path.dirname(config.llvm_tools_dir), "lib"))
    )

# PyTorch, for tests that read pp's exports with torch.distributed.pipelining:
# `--param torch_python=...` or PP_TORCH_PYTHON names a Python that has it,
# else the build's Python (setup.sh's venv, where setup-torch.sh puts torch)
# and python3 are tried.
def find_torch_python():
    candidates = [lit_config.params.get("torch_python"),
                  os.environ.get("PP_TORCH_PYTHON"),
                  getattr(config, "python_executable", None),
                  shutil.which("python3")]
    for python in filter(None, candidates):
        try:
            subprocess.run([python, "-c", "import torch.distributed.pipelining"],
                           check=True, capture_output=True, timeout=120)
            return python
        except (OSError, subprocess.SubprocessError):
            continue
    return None


torch_python = find_torch_python()
if torch_python:
    config.available_features.add("torch")
    config.substitutions.append(("%torch_python", torch_python))
