"""pp.compile takes every option pp-compile has, under the same name in
snake_case, from the one table both come from; option errors say which
option and what is wrong, and a schedule typo is a one-line option error."""

import pathlib
import re
import subprocess
import time

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
MLP = REPO / "examples" / "mlp" / "mlp.mlir"

# pp-compile's flags that only the tool takes: pp.compile always builds an
# executable.
TOOL_ONLY = {"emit", "profile-steps", "profile-warmup", "progress-after"}


def _flags(help_text):
    """The flags --help lists under pp-compile's own headings (every
    section but LLVM's "Generic Options")."""
    options = help_text.split("OPTIONS:", 1)[1]
    sections = re.split(r"^(\S[^\n]*):$", options, flags=re.M)[1:]
    flags = set()
    for heading, section in zip(sections[::2], sections[1::2]):
        if heading != "Generic Options":
            flags |= set(re.findall(r"^  -{1,2}([A-Za-z][\w-]*)", section,
                                    re.M))
    return flags


def test_every_flag_has_a_python_twin(pp, pp_compile):
    help_text = subprocess.run([pp_compile, "--help"], capture_output=True,
                               text=True, check=True).stdout
    flags = _flags(help_text)
    assert {"stages", "schedule", "memory-cap", "precision", "target",
            "cuda-chip", "O", "o"} <= flags
    twins = {option.flag.lstrip("-"): option
             for option in pp.COMPILE_OPTIONS.values()}
    assert sorted(flags - TOOL_ONLY - twins.keys()) == []
    assert sorted(twins.keys() - flags) == []
    for flag, option in twins.items():
        if flag not in ("O", "o", "data-parallel"):
            assert option.keyword == flag.replace("-", "_")
        assert option.help in help_text


def _sample(option):
    if option.choices:
        return option.choices[0]
    return {"bool": True, "int": 1, "str": "", "str list": ["cpu"],
            "float list": [1e9], "int list": [0]}[option.kind]


@pytest.mark.parametrize("keyword", ["memory_cap", "precision", "target",
                                     "cuda_chip", "device", "jobs",
                                     "opt_level", "split_backward",
                                     "tensor_parallel", "plan_zero",
                                     "measure_costs"])
def test_compile_takes_option(pp, keyword):
    # Every option is set before the model is read: the error is the
    # model's, at its first line.
    option = pp.COMPILE_OPTIONS[keyword]
    with pytest.raises(pp.CompileError) as info:
        pp.compile("func.func @train_step(", stages=1, microbatches=1,
                   filename="m.mlir", **{keyword: _sample(option)})
    assert info.value.diagnostics[0].location == "m.mlir:1:22"


def test_compile_takes_every_option(pp):
    options = {keyword: _sample(option)
               for keyword, option in pp.COMPILE_OPTIONS.items()
               # --measure-costs refuses --devices and --variant.
               if keyword not in ("output", "stages", "microbatches",
                                  "schedule", "ranks", "replicas",
                                  "measure_costs")}
    with pytest.raises(pp.CompileError) as info:
        pp.compile("func.func @train_step(", stages=1, microbatches=1,
                   filename="m.mlir", **options)
    assert info.value.diagnostics[0].location == "m.mlir:1:22"


def test_option_values_are_checked(pp):
    with pytest.raises(pp.CompileError) as info:
        pp.compile(MLP, stages=1, microbatches=1, precision="fp16")
    [diag] = info.value.diagnostics
    assert diag.location == "--precision"
    assert diag.message == "--precision takes fp32, bf16; got 'fp16'"
    with pytest.raises(pp.CompileError) as info:
        pp.compile(MLP, stages=1, microbatches=1, opt_level=-1)
    assert info.value.diagnostics[0].location == "-O"
    with pytest.raises(TypeError, match="'memory_cap' takes float list"):
        pp.compile(MLP, stages=1, microbatches=1, memory_cap="lots")
    with pytest.raises(TypeError, match="'plan_zero' takes int list"):
        pp.compile(MLP, stages=1, microbatches=1, plan_zero=[1.0])
    with pytest.raises(TypeError, match="'cuda_chip' takes str"):
        pp.compile(MLP, stages=1, microbatches=1, cuda_chip=90)
    with pytest.raises(TypeError, match="'stages' takes int"):
        pp.compile(MLP, stages=True, microbatches=1)


@pytest.mark.parametrize("keyword,value,message", [
    ("stages", -1, "--stages must be between 1 and 512, got -1"),
    ("microbatches", 0, "--microbatches must be between 1 and 1048576, "
     "got 0"),
    ("ranks", -1, "--ranks must be between 0 and 65536 (0: one rank per "
     "stage), got -1"),
    ("replicas", 0, "--data-parallel must be between 1 and 65536, got 0"),
    ("tensor_parallel", 0, "--tensor-parallel must be between 1 and 65536, "
     "got 0"),
])
def test_compile_bad_numbers(pp, keyword, value, message):
    options = {"stages": 1, "microbatches": 1, keyword: value}
    with pytest.raises(pp.CompileError) as info:
        pp.compile(MLP, **options)
    assert [d.message for d in info.value.diagnostics] == [message]


@pytest.mark.parametrize("keyword,value", [
    ("num_stages", -1), ("num_stages", 0), ("num_microbatches", 0),
    ("num_ranks", 0), ("num_replicas", -3),
])
def test_schedule_bad_numbers(pp, keyword, value):
    options = {"num_stages": 2, "num_microbatches": 4, keyword: value}
    with pytest.raises(ValueError,
                       match=f"^{keyword} must be at least 1, got {value}$"):
        pp.schedule("1f1b", **options)


def test_schedule_typo_is_one_option_error(pp_compile):
    start = time.monotonic()
    proc = subprocess.run([pp_compile, str(MLP), "--stages", "2",
                           "--microbatches", "4", "--schedule", "1f1bx"],
                          capture_output=True, text=True)
    elapsed = time.monotonic() - start
    assert proc.returncode == 2
    assert proc.stdout == ""
    [line] = proc.stderr.splitlines()
    assert line.startswith("pp-compile: for the --schedule option: unknown "
                           "schedule '1f1bx'; expected one of: gpipe, 1f1b, ")
    assert elapsed < 1.0, elapsed


@pytest.mark.parametrize("options,location,message", [
    ({"target_cpu": "bogus-cpu"}, "--target-cpu",
     r"^--target-cpu 'bogus-cpu' is not a CPU of target '.+'$"),
    ({"target_cpu": "i386"}, "--target-cpu",
     r"^--target-cpu 'i386' cannot run the 64-bit code of target '.+'$"),
    ({"target_features": "+foo"}, "--target-features",
     r"^--target-features '\+foo': 'foo' is not a feature of target '.+'$"),
    # An empty chip crashed the interpreter in upstream's NVVM target
    # verifier.
    ({"target": "cuda", "cuda_chip": ""}, "--cuda-chip",
     r"^--cuda-chip '' is not an NVIDIA GPU architecture such as sm_90 or "
     r"sm_90a$"),
    ({"target_features": "-64bit-mode"}, "--target-features",
     r"^--target-features '-64bit-mode': '64bit-mode' is set by target '.+' "
     r"and cannot be changed$"),
])
def test_target_errors(pp, tmp_path, options, location, message):
    # These ended the interpreter ("LLVM ERROR: 64-bit code requested on a
    # subtarget that doesn't support it!").
    with pytest.raises(pp.CompileError) as info:
        pp.compile(MLP, stages=1, microbatches=1,
                   output=str(tmp_path / "train"), **options)
    [diag] = info.value.diagnostics
    assert diag.location == location
    assert re.match(message, diag.message), diag.message


def test_code_the_target_cannot_generate(pp, tmp_path):
    # LLVM reported it and exited the process from a code generation thread.
    with pytest.raises(pp.CompileError) as info:
        pp.compile(MLP, stages=1, microbatches=1, opt_level=0,
                   target_features="-sse,-sse2",
                   output=str(tmp_path / "train"))
    [diag] = info.value.diagnostics
    assert re.match(r"^cannot generate code for '\w+': SSE register return "
                    r"with SSE disabled$", diag.message), diag.message
    # The interpreter goes on and compiles.
    program = pp.compile(MLP, stages=1, microbatches=1, opt_level=0,
                         output=str(tmp_path / "train"))
    assert program.path.exists()


def test_malformed_index_list_is_an_error(pp, tmp_path):
    # MLIR's linalg.transpose parser crashed on it, ending the interpreter.
    text = (REPO / "test/Tools/Inputs/malformed-permutation.mlir").read_text()
    with pytest.raises(pp.CompileError) as info:
        pp.compile(text, stages=1, microbatches=1, filename="m.mlir",
                   output=str(tmp_path / "train"))
    [diag] = info.value.diagnostics
    assert diag.location == "m.mlir:4:92"
    assert diag.message == ("expected a list of integers in brackets after "
                            "'permutation ='")
