"""pp.compile and pp.run: the MLP example compiled in process trains like
the same program built by pp-compile, pipelined or not; rejected models and
options raise pp.CompileError with a location, failed runs pp.RunError."""

import pathlib
import re
import subprocess

import pytest

from conftest import REPO

MLP = REPO / "examples" / "mlp" / "mlp.mlir"
STEPS = 4
LR = 0.1


def close(a, b, rtol=1e-5):
    return abs(a - b) <= rtol * max(abs(a), abs(b), 1e-12)


@pytest.fixture(scope="module")
def reference(pp):
    """The unpipelined MLP: 1 stage, 1 micro-batch, on one process."""
    return pp.compile(MLP, stages=1, microbatches=1)


@pytest.fixture(scope="module")
def pipelined(pp, tmp_path_factory):
    """2 stages on 2 ranks under 1F1B, 4 micro-batches."""
    output = tmp_path_factory.mktemp("pipelined") / "train"
    return pp.compile(str(MLP), stages=2, ranks=2, microbatches=4,
                      schedule="1f1b", output=output)


def test_program(pp, reference, pipelined):
    assert pipelined.path.name == "train" and pipelined.path.is_file()
    assert (pipelined.schedule, pipelined.stages, pipelined.ranks,
            pipelined.microbatches, pipelined.replicas) == ("1f1b", 2, 2, 4,
                                                            1)
    assert pipelined.processes == 2
    assert (reference.stages, reference.ranks) == (1, 1)
    # The MLP's weights: arguments 2-9, w0 (16x32), b0 (32), ..., b3 (4).
    assert [p.argument for p in pipelined.params] == list(range(2, 10))
    assert pipelined.params[0] == pp.Param(2, "tensor<16x32xf32>", (16, 32),
                                           "f32")
    assert pipelined.params[-1].shape == (4,)
    assert reference.params == pipelined.params


def test_pipelined_trains_like_unpipelined(pp, reference, pipelined):
    ref = pp.run(reference, steps=STEPS, lr=LR, param_stats=True)
    run = pp.run(pipelined, steps=STEPS, lr=LR, param_stats=True)
    assert len(run.losses) == STEPS and len(run.step_times) == STEPS
    assert all(t > 0 for t in run.step_times)
    # Training lowers the loss, and both partitions agree step by step.
    assert ref.losses[-1] < ref.losses[0]
    for a, b in zip(ref.losses, run.losses):
        assert close(a, b), (ref.losses, run.losses)
    assert sorted(run.params) == list(range(2, 10))
    for index, (s, q) in ref.params.items():
        assert close(s, run.params[index][0], 1e-4)
        assert close(q, run.params[index][1], 1e-4)


def test_recompute_trains_like_unpipelined(pp, reference, tmp_path):
    """Every stage recomputes its forward in its backward (B then W): the
    losses do not change (docs/Recompute.md)."""
    program = pp.compile(MLP, stages=2, ranks=2, microbatches=4,
                         split_backward=True, recompute="all",
                         output=tmp_path / "train")
    ref = pp.run(reference, steps=STEPS, lr=LR)
    run = pp.run(program, steps=STEPS, lr=LR)
    for a, b in zip(ref.losses, run.losses):
        assert close(a, b), (ref.losses, run.losses)


def test_tensor_parallel_trains_like_unpipelined(pp, reference, tmp_path):
    """2 ranks, each a group of 2 processes splitting its weights
    (docs/TensorParallel.md): 4 processes, the same losses and global
    weights."""
    program = pp.compile(MLP, stages=2, microbatches=4, tensor_parallel=2,
                         output=tmp_path / "train")
    assert (program.ranks, program.tensor_parallel, program.processes) == (
        2, 2, 4)
    ref = pp.run(reference, steps=STEPS, lr=LR, param_stats=True)
    run = pp.run(program, steps=STEPS, lr=LR, param_stats=True)
    for a, b in zip(ref.losses, run.losses):
        assert close(a, b), (ref.losses, run.losses)
    for index, (s, q) in ref.params.items():
        assert close(s, run.params[index][0], 1e-4)
        assert close(q, run.params[index][1], 1e-4)


def test_zero3_trains_like_data_parallel(pp, tmp_path):
    """zero=3 (docs/DataParallel.md): the schedule gathers each stage's
    weights before its first compute, and 2 stages x 2 replicas train to
    the losses and the saved weights of plain data parallelism, bit for
    bit."""
    runs = {}
    for zero in (0, 3):
        program = pp.compile(MLP, stages=2, microbatches=4, replicas=2,
                             zero=zero, output=tmp_path / f"train{zero}")
        assert ("zero = 3 : i64" in program.schedule_ir) == (zero == 3)
        save = tmp_path / f"weights{zero}.safetensors"
        runs[zero] = (pp.run(program, steps=STEPS, lr=LR, save=save).losses,
                      save.read_bytes())
    assert runs[0] == runs[3]
    assert "pp.all_gather stage 1\n      pp.recv" in program.schedule_ir


def test_devices_plan_the_layout(pp, tmp_path):
    """`devices` leaves T, stages and replicas to pp-plan-parallelism: in
    18000 bytes per device the MLP splits its layers over 2 x 2."""
    program = pp.compile(MLP, microbatches=4, devices=4, memory_cap=[18000],
                         output=tmp_path / "train")
    assert (program.ranks, program.tensor_parallel, program.replicas,
            program.processes) == (2, 2, 1, 4)


def test_devices_choose_the_zero_stage(pp, tmp_path):
    """Without ZeRO-1 on offer, 36000 bytes fit 4 replicas of the MLP (Adam)
    only under ZeRO-3, and the program built gathers its weights so."""
    program = pp.compile(MLP, microbatches=4, devices=4, memory_cap=[36000],
                         plan_zero=[0, 3], output=tmp_path / "train")
    assert program.remarks[0].startswith(
        "4 devices: T = 1, P = 1, R = 4, ZeRO-3:")
    assert "zero = 3 : i64" in program.schedule_ir
    assert "pp.all_gather stage 0" in program.schedule_ir


@pytest.mark.parametrize("cap,layout", [(None, (1, 1, 4)),
                                        (30000, (2, 1, 2))])
def test_devices_layout_is_the_programs(pp, tmp_path, cap, layout):
    """The layout planner's choice, as its remark states it, is what the
    Program reports and what its schedule runs."""
    caps = {} if cap is None else {"memory_cap": [cap]}
    program = pp.compile(MLP, microbatches=4, devices=4, schedule="auto",
                         output=tmp_path / "train", **caps)
    ranks, tensor_parallel, replicas = layout
    assert (program.ranks, program.tensor_parallel,
            program.replicas) == layout
    assert program.remarks[0].startswith(
        f"4 devices: T = {tensor_parallel}, P = {ranks}, R = {replicas}:")
    assert any(r.startswith("auto: makespan") for r in program.remarks)
    schedule = program.timeline()
    assert (schedule.num_ranks, schedule.num_microbatches) == (ranks, 4)
    assert f"num_replicas = {replicas}" in program.schedule_ir or \
        replicas == 1
    assert schedule.to_ascii().count("\nrank ") == ranks
    assert len(pp.run(program, steps=2, lr=LR).losses) == 2


def test_matches_pp_compile(pp, pp_compile, pipelined, tmp_path):
    """The executable pp-compile builds for the same options prints the
    losses pp.run returns, digit for digit."""
    exe = tmp_path / "train"
    subprocess.run([pp_compile, str(MLP), "--stages", "2", "--ranks", "2",
                    "--microbatches", "4", "--schedule", "1f1b", "-o",
                    str(exe)], check=True)
    out = subprocess.run([pp._mpiexec(), "-n", "2", str(exe), "--steps",
                          str(STEPS), "--lr", str(LR)], check=True,
                         capture_output=True, text=True).stdout
    printed = [float(m) for m in
               re.findall(r"^step \d+ loss (\S+)$", out, re.M)]
    run = pp.run(pipelined, steps=STEPS, lr=LR)
    assert len(printed) == STEPS
    assert run.losses == printed
    # pp.run's losses come from --metrics; stdout has the same.
    assert run.stdout.count(" loss ") == STEPS


def test_syntax_error_is_located(pp, tmp_path):
    bad = tmp_path / "bad.mlir"
    bad.write_text(MLP.read_text().replace("tensor<16x4xf32> {pp.target}",
                                           "tensor<16x4xf32> {pp.target",
                                           1))
    with pytest.raises(pp.CompileError) as info:
        pp.compile(bad, stages=2, microbatches=2)
    error = info.value
    assert isinstance(error, pp.Error)
    [diag] = error.diagnostics
    assert diag.severity == "error"
    assert re.fullmatch(re.escape(str(bad)) + r":7:\d+", diag.location), \
        diag.location
    assert str(bad) + ":7:" in str(error)
    # Text is named <string>, or `filename`.
    with pytest.raises(pp.CompileError) as info:
        pp.compile("func.func @train_step(", stages=1, microbatches=1,
                   filename="m.mlir")
    assert info.value.diagnostics[0].location == "m.mlir:1:22"


def test_invalid_options_are_located(pp):
    with pytest.raises(pp.CompileError) as info:
        pp.compile(MLP, stages=0, microbatches=1)
    [diag] = info.value.diagnostics
    assert diag.location == "--stages"
    assert diag.message == "--stages must be between 1 and 512, got 0"
    with pytest.raises(pp.CompileError) as info:
        pp.compile(MLP, stages=1, microbatches=1, gemm="blas")
    assert info.value.diagnostics[0].location == "--gemm"
    with pytest.raises(pp.CompileError) as info:
        pp.compile(MLP, stages=1, microbatches=1, recompute="some")
    assert info.value.diagnostics[0].location == "--recompute"
    # The model's batch of 16 rows does not split into 3 micro-batches:
    # located in the model.
    with pytest.raises(pp.CompileError, match="not divisible into 3 "
                       "micro-batches") as info:
        pp.compile(MLP, stages=2, microbatches=3)
    assert info.value.diagnostics[0].location.startswith(str(MLP) + ":")
    with pytest.raises(pp.CompileError, match="unknown schedule 'zigzag'"):
        pp.compile(MLP, stages=2, microbatches=2, schedule="zigzag")
    with pytest.raises(pp.CompileError, match="is not a directory"):
        pp.compile(MLP, stages=1, microbatches=1,
                   output="/nonexistent/dir/train")
    with pytest.raises(TypeError, match="unknown option 'stage'"):
        pp.compile(MLP, stages=1, microbatches=1, stage=2)


def test_failing_run(pp, reference, tmp_path):
    with pytest.raises(pp.RunError) as info:
        pp.run(reference, steps=2, extra_args=["--no-such-option"])
    error = info.value
    assert error.returncode == 2
    assert "unknown option '--no-such-option'" in str(error)
    assert "usage:" in error.stderr and "usage:" not in str(error)
    with pytest.raises(pp.RunError, match="no-such.safetensors"):
        pp.run(reference, steps=2,
               init_weights=tmp_path / "no-such.safetensors")
    with pytest.raises(ValueError, match="fixed by pp.compile"):
        pp.run(reference, steps=2, microbatches=4)


def test_relative_output(pp, tmp_path, monkeypatch):
    """An output relative to the working directory runs from anywhere."""
    monkeypatch.chdir(tmp_path)
    program = pp.compile(MLP, stages=1, microbatches=2, output="train")
    assert program.path == tmp_path / "train"
    monkeypatch.chdir(REPO)
    assert len(pp.run(program, steps=1).losses) == 1


def test_save_and_resume(pp, reference, tmp_path):
    """--save and --init-weights through pp.run: 2 steps, then 2 from the
    saved weights, train like 4 steps."""
    weights = tmp_path / "w.safetensors"
    whole = pp.run(reference, steps=4, lr=LR)
    pp.run(reference, steps=2, lr=LR, save=weights)
    rest = pp.run(reference, steps=2, lr=LR, init_weights=weights,
                  extra_args=["--first-step", "3"])
    assert rest.losses == whole.losses[2:]


def test_auto_schedules_by_measured_costs(pp, tmp_path):
    """auto building an executable schedules by what a profiling run of
    the program measured (its set-up time only a measurement has), and
    its makespan is the program's under those costs; with
    measure_costs=False it keeps the planner's estimates."""
    program = pp.compile(MLP, microbatches=4, stages=2, schedule="auto",
                         output=tmp_path / "train")
    assert "scheduling by the costs of 10 profiled steps on this machine" \
        in program.remarks
    made = next(re.match(r"auto: makespan (\S+) s", r)
                for r in program.remarks if r.startswith("auto:"))
    assert float(made.group(1)) == pytest.approx(
        program.timeline().simulate().makespan, rel=1e-11)
    assert "step_overhead =" in program.schedule_ir
    estimated = pp.compile(MLP, microbatches=4, stages=2, schedule="auto",
                           measure_costs=False, output=tmp_path / "est")
    assert not any(r.startswith("scheduling by") for r in estimated.remarks)
    assert "step_overhead =" not in estimated.schedule_ir


def test_auto_chooses_the_stage_count(pp, tmp_path):
    """auto given ranks and no stages tries 2, 4 and 6 stages and builds
    the one it schedules fastest: the Program runs the count its remark
    names."""
    program = pp.compile(MLP, microbatches=4, ranks=2, schedule="auto",
                         measure_costs=False, output=tmp_path / "train")
    chose = next(re.match(r"--schedule auto on 2 ranks: (\d+) stages, the "
                          r"fastest of (.*)", r)
                 for r in program.remarks if r.startswith("--schedule"))
    tried = [int(n) for n in re.findall(r"(\d+) stages: makespan",
                                        chose.group(2))]
    assert tried == [2, 4, 6]
    assert (program.stages, program.ranks) == (int(chose.group(1)), 2)
    assert program.timeline().num_stages == program.stages
