"""pp from Python: pipeline schedules generated, imported, verified,
simulated and plotted in process by pp's C++ libraries, and models compiled
into pipelined MPI programs and run (docs/Python.md).

    >>> import pp
    >>> s = pp.schedule("1f1b", num_stages=4, num_microbatches=8)
    >>> s.verify().simulate().makespan
    33.0

and, from the repository's root (docs/Python.md, "Compiling and running"):

    program = pp.compile(pathlib.Path("examples/mlp/mlp.mlir"), stages=2,
                         microbatches=4)
    pp.run(program, steps=3).losses   # [0.174504686, 0.166459348, 0.153655618]
"""

from __future__ import annotations

import dataclasses
import json
import numbers
import os
import pathlib
import re
import shutil
import stat
import subprocess
import tempfile
import weakref
from typing import (Dict, List, Mapping, Optional, Sequence, Tuple, Union)

from . import _pp
from ._pp import CompileError, Diagnostic, Error, VerifyError

__all__ = [
    "COMPILE_OPTIONS", "SCHEDULES", "Action", "CompileError", "CompileOption",
    "Costs", "Diagnostic", "Error", "ExportError",
    "Param", "Program", "RunError", "RunResult", "Schedule", "Simulation",
    "VerifyError", "compile", "run", "sample_order", "schedule",
]

SCHEDULES = tuple(n for n in _pp.generator_names()
                  if n not in ("auto", "exact"))
"""The built-in schedules (pp-schedule's registry: gpipe, 1f1b, ...);
`auto` searches them and more, `exact` is its exact search alone."""

PerStage = Union[float, Sequence[float]]
"""One value for every stage, or one per stage."""

Source = Union[str, "os.PathLike[str]"]
"""A document's text (str) or the path of a file holding it."""


@dataclasses.dataclass(frozen=True)
class Costs:
    """What a schedule is built for: the fields of `#pp.cost`, and of
    pp-schedule's cost options. Unset fields keep pp-schedule's defaults
    (times and activations 1, stash and comm 0) or the cost file's."""

    forward: Optional[PerStage] = None
    backward_input: Optional[PerStage] = None
    backward_weight: Optional[PerStage] = None
    comm: Optional[float] = None
    activation: Optional[PerStage] = None
    stash: Optional[PerStage] = None


@dataclasses.dataclass(frozen=True)
class Simulation:
    """What pp-simulate reports: the time the last action ends, each rank's
    idle time, the bubble (idle over makespan times ranks) and each rank's
    peak activation memory."""

    makespan: float
    idle: List[float]
    bubble: float
    peak_memory: List[float]


@dataclasses.dataclass(frozen=True)
class Action:
    """One action of a simulated timeline. `kind` is its PyTorch-pipelining
    name (F, B, W, BW, SEND_F, RECV_F, SEND_B, RECV_B, ALLREDUCE, OPT,
    REDUCESCATTER, ALLGATHER); `microbatch` is -1 for the collectives and
    optimizer steps; `memory` is the
    activation memory its rank holds after it."""

    rank: int
    kind: str
    stage: int
    microbatch: int
    start: float
    end: float
    memory: float


def _values(value: Optional[PerStage], name: str) -> List[float]:
    """`value` (one number, or one per stage or rank) as a list; TypeError
    naming the argument `name` for anything else."""
    def number(v):
        return isinstance(v, numbers.Real) and not isinstance(v, bool)
    if value is None:
        return []
    if number(value):
        return [float(value)]
    try:
        values = None if isinstance(value, (str, bytes)) else list(value)
    except TypeError:
        values = None
    if values is None or not all(number(v) for v in values):
        raise TypeError(f"{name} must be a number or a sequence of numbers, "
                        f"got {value!r}")
    return [float(v) for v in values]


# The largest text file (model, schedule) read: far above any real one.
_MAX_TEXT_BYTES = 4 << 30


def _read_regular_file(path: pathlib.Path) -> str:
    """The text of the regular file `path`. Opened without blocking and
    checked first: a FIFO would block the read forever and a device such as
    /dev/zero would be read until memory runs out; both raise ValueError,
    as does a file of more than _MAX_TEXT_BYTES."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY)
    info = os.fstat(fd)
    # Checked before the descriptor becomes a file object: opening a
    # directory as one raises IsADirectoryError naming the descriptor.
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        what = "a directory" if stat.S_ISDIR(info.st_mode) else \
            "not a regular file (a FIFO or device)"
        raise ValueError(f"cannot read '{path}': it is {what}")
    with os.fdopen(fd, "rb") as f:
        if info.st_size > _MAX_TEXT_BYTES:
            raise ValueError(f"cannot read '{path}': it has {info.st_size} "
                             f"bytes; at most {_MAX_TEXT_BYTES} are read")
        os.set_blocking(fd, True)
        return f.read(info.st_size).decode()


def _check_path(name: str, value: object) -> None:
    """TypeError naming the argument `name` unless `value` is a str or a
    path-like."""
    if not isinstance(value, (str, os.PathLike)):
        raise TypeError(f"{name} must be a str or a path-like, got "
                        f"{value!r}")


def _read(source: Source, filename: Optional[str],
          name: str = "source") -> Tuple[str, str]:
    """The text of `source` and the name its diagnostics use."""
    _check_path(name, source)
    if filename is not None and not isinstance(filename, str):
        raise TypeError(f"filename must be a str, got {filename!r}")
    if isinstance(source, os.PathLike):
        path = pathlib.Path(source)
        return _read_regular_file(path), filename or str(path)
    return source, filename or "<string>"


def _write(text: str, path: Optional[Source]) -> str:
    if path is not None:
        _check_path("path", path)
        if os.path.isdir(path):
            raise ValueError(f"path: cannot write '{os.fspath(path)}': it is "
                             "a directory")
        pathlib.Path(path).write_text(text)
    return text


class Schedule:
    """A materialised `pp.schedule`: which rank runs which action, in order.

    Make one with `pp.schedule` or read one with `from_json`, `from_csv`,
    `from_mlir` or `load`."""

    def __init__(self, native: "_pp.NativeSchedule"):
        self._native = native

    # Reading and writing -------------------------------------------------

    @classmethod
    def from_json(cls, source: Source, *,
                  filename: Optional[str] = None) -> "Schedule":
        """Reads a `pp-schedule-v1` JSON document (text or a path). Raises
        `pp.Error` with diagnostics located in the document."""
        return cls(_pp.from_json(*_read(source, filename)))

    @classmethod
    def from_csv(cls, source: Source, *, filename: Optional[str] = None,
                 insert_transfers: bool = False) -> "Schedule":
        """Reads PyTorch pipelining's per-rank action CSV (text or a path).
        A CSV without SEND/RECV actions needs `insert_transfers=True` to
        become a schedule that verifies."""
        schedule = cls(_pp.from_csv(*_read(source, filename)))
        return schedule.insert_transfers() if insert_transfers else schedule

    @classmethod
    def from_mlir(cls, source: Source, *,
                  filename: Optional[str] = None) -> "Schedule":
        """Parses a module holding one `pp.schedule` in MLIR's text form."""
        return cls(_pp.from_mlir(*_read(source, filename)))

    @classmethod
    def load(cls, path: Source) -> "Schedule":
        """Reads a `.json`, `.csv` or `.mlir` file by its suffix."""
        readers = {".json": cls.from_json, ".csv": cls.from_csv,
                   ".mlir": cls.from_mlir}
        _check_path("path", path)
        suffix = pathlib.Path(path).suffix
        if suffix not in readers:
            raise ValueError(f"cannot tell the format of {path}: expected "
                             ".json, .csv or .mlir")
        return readers[suffix](pathlib.Path(path))

    def to_json(self, path: Optional[Source] = None) -> str:
        """The `pp-schedule-v1` JSON document; also written to `path`."""
        return _write(self._native.to_json(), path)

    def to_csv(self, path: Optional[Source] = None) -> str:
        """PyTorch pipelining's action CSV (no all-reduces or optimizer
        steps); also written to `path`."""
        return _write(self._native.to_csv(), path)

    def to_mlir(self) -> str:
        """The module holding the schedule, in MLIR's text form."""
        return self._native.to_mlir()

    def to_ascii(self) -> str:
        """pp-translate's unit-cost text timeline."""
        return self._native.to_ascii()

    def to_chrome_trace(self, path: Optional[Source] = None) -> str:
        """pp-translate's unit-cost Chrome trace events (for Perfetto);
        also written to `path`."""
        return _write(self._native.to_chrome_trace(), path)

    def to_svg(self, path: Optional[Source] = None) -> str:
        """pp-translate's unit-cost SVG timeline; also written to `path`."""
        return _write(self._native.to_svg(), path)

    # What it is ----------------------------------------------------------

    @property
    def name(self) -> str:
        """The schedule it was generated as (`1f1b`, ...)."""
        return self._native.name

    @property
    def num_stages(self) -> int:
        """The number of pipeline stages."""
        return self._native.num_stages

    @property
    def num_ranks(self) -> int:
        """The number of ranks (pipeline processes of one replica)."""
        return self._native.num_ranks

    @property
    def num_microbatches(self) -> int:
        """The number of micro-batches per training step."""
        return self._native.num_microbatches

    @property
    def stage_rank(self) -> List[int]:
        """The rank of each stage."""
        return self._native.stage_rank

    @property
    def memory_caps(self) -> List[Optional[float]]:
        """Each rank's activation memory cap, None where it has none."""
        return self._native.memory_caps

    @property
    def remarks(self) -> List[str]:
        """What the passes that made it remarked (auto's search result)."""
        return self._native.remarks

    def __repr__(self) -> str:
        return (f"<pp.Schedule {self.name!r}: {self.num_stages} stages on "
                f"{self.num_ranks} ranks, {self.num_microbatches} "
                "micro-batches>")

    # Checking and running ------------------------------------------------

    def insert_transfers(self, num_replicas: int = 1,
                         semantics: Optional[str] = None,
                         zero: Union[int, Sequence[int]] = 0) -> "Schedule":
        """Runs pp-insert-transfers on the schedule; returns it. With
        `semantics="rendezvous"` the transfers form exchange groups that
        cannot deadlock when a send waits for its receive (NCCL);
        `"async"` leaves each receive right before its consumer; by default
        the semantics the schedule was generated for, which it records.
        With `num_replicas` > 1, `zero=1` shards the optimizer state over
        the replicas (ZeRO-1): each stage's gradients are reduce-scattered
        instead of all-reduced, and its weights all-gathered after its
        optimizer step; `zero=3` shards the weights too (ZeRO-3): the
        all-gather comes before the stage's first compute instead. A list
        (`zero=[0, 3]`) gives each stage its own level."""
        _check_count("num_replicas", num_replicas)
        _check_semantics(semantics)
        levels = [zero] if isinstance(zero, int) else zero
        if isinstance(zero, (bool, str)) or not isinstance(
                levels, Sequence) or not levels or any(
                isinstance(z, bool) or not isinstance(z, int) for z in levels):
            raise TypeError(f"zero must be an int or a list of ints, got "
                            f"{zero!r}")
        self._native.insert_transfers(num_replicas, semantics or "",
                                      list(levels))
        return self

    def verify(self, semantics: Optional[str] = None) -> "Schedule":
        """Runs pp-verify-schedule; returns the schedule if it is complete,
        ordered, deadlock free and within its memory caps, else raises
        `pp.VerifyError` carrying the located diagnostics. `semantics` is
        `async` (sends never block) or `rendezvous`; by default the
        schedule's."""
        _check_semantics(semantics)
        self._native.verify(semantics or "")
        return self

    def simulate(self, semantics: Optional[str] = None,
                 all_reduce_cost: Optional[PerStage] = None) -> Simulation:
        """Runs pp-simulate under the schedule's costs and, by default, its
        transfer semantics: makespan, idle time and peak memory per rank,
        and the bubble."""
        _check_semantics(semantics)
        makespan, idle, peak = self._native.simulate(
            semantics or "", _values(all_reduce_cost, "all_reduce_cost"))
        total = makespan * len(idle)
        return Simulation(makespan=makespan, idle=idle,
                          bubble=sum(idle) / total if total > 0 else 0.0,
                          peak_memory=peak)

    def timeline(self, semantics: Optional[str] = None) -> List[Action]:
        """Every action with when it runs under the schedule's costs (the
        simulation of `simulate`, all-reduces free), rank by rank."""
        _check_semantics(semantics)
        return [Action(*entry)
                for entry in self._native.timeline(semantics or "")]

    def plot(self, path: Optional[Source] = None, *,
             semantics: Optional[str] = None, title: Optional[str] = None):
        """Draws the timeline (one row per rank, boxes coloured by phase and
        labelled with the micro-batch) over each rank's activation memory,
        and saves it to `path` (PNG, SVG or any format matplotlib knows by
        the suffix). Returns the matplotlib Figure. Needs matplotlib."""
        from . import plot
        return plot.plot_schedule(self, path, semantics=semantics,
                                  title=title)


def _check_semantics(semantics: object) -> None:
    """TypeError unless `semantics` is None or a str (the native module
    names the values it takes)."""
    if semantics is not None and not isinstance(semantics, str):
        raise TypeError(f"semantics must be a str ('async' or "
                        f"'rendezvous'), got {semantics!r}")


def _check_count(name: str, value: object) -> None:
    """Rejects a count (stages, ranks, ...) that is not a positive int,
    saying which argument and what it got."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, got {value!r}")
    if value < 1:
        raise ValueError(f"{name} must be at least 1, got {value}")


def schedule(name: str, *, num_microbatches: int,
             num_stages: Optional[int] = None,
             num_ranks: Optional[int] = None, split_backward: bool = False,
             costs: Union[Costs, Mapping[str, object], None] = None,
             memory_cap: Optional[PerStage] = None,
             cost_file: Optional[Source] = None, num_replicas: int = 1,
             insert_transfers: bool = True, slices: int = 1,
             semantics: str = "async") -> Schedule:
    """Generates a schedule with pp-schedule, then (by default) makes its
    transfers explicit with pp-insert-transfers.

    `name` is one of `SCHEDULES`, `auto` (the fastest schedule found within
    the memory caps) or `exact` (auto's exact search alone). Without
    `num_stages` the cost file gives it; `num_ranks` defaults to one rank
    per stage. `costs` (a `Costs` or a mapping of its fields) and
    `memory_cap` (one value for every rank, 0 for none, or one per rank)
    override `cost_file` (a `pp-profile-v1` JSON file). `num_replicas` > 1
    adds the data-parallel all-reduces. `slices` > 1 cuts every
    micro-batch into that many sequence slices (`seq1f1b`): the schedule
    then counts slices in `num_microbatches` and its costs are one slice's
    (docs/Seq1F1B.md). `semantics` is how the program's transfers behave:
    "async" (sends never block, as MPI's; the default) or "rendezvous" (a
    send waits for its receive, as NCCL's do); `auto` and `greedy`
    optimise the program that runs under them, the transfers are ordered
    for them, and the schedule records them for `simulate` and `verify`.
    Raises `pp.Error` with pp-schedule's diagnostics when the schedule does
    not fit the problem or for an unknown `semantics`, `ValueError` for a
    count below 1."""
    _check_count("num_microbatches", num_microbatches)
    for argument, value in (("num_stages", num_stages),
                            ("num_ranks", num_ranks)):
        if value is not None:
            _check_count(argument, value)
    _check_count("num_replicas", num_replicas)
    _check_count("slices", slices)
    if not isinstance(name, str):
        raise TypeError(f"name must be a str (one of SCHEDULES, 'auto' or "
                        f"'exact'), got {name!r}")
    _check_semantics(semantics)
    if semantics is None:
        semantics = "async"
    if cost_file is not None:
        _check_path("cost_file", cost_file)
    if costs is None:
        costs = Costs()
    elif isinstance(costs, Mapping):
        fields = {f.name for f in dataclasses.fields(Costs)}
        unknown = [key for key in costs if key not in fields]
        if unknown:
            raise ValueError(f"costs: unknown field {unknown[0]!r}; the "
                             f"fields are {', '.join(sorted(fields))}")
        costs = Costs(**costs)
    elif not isinstance(costs, Costs):
        raise TypeError(f"costs must be a pp.Costs or a mapping of its "
                        f"fields, got {costs!r}")
    cost_lists = [_values(costs.forward, "costs.forward"),
                  _values(costs.backward_input, "costs.backward_input"),
                  _values(costs.backward_weight, "costs.backward_weight"),
                  _values(costs.activation, "costs.activation"),
                  _values(costs.stash, "costs.stash")]
    comm = _values(costs.comm, "costs.comm")
    if len(comm) > 1:
        raise TypeError(f"costs.comm must be a number, got {costs.comm!r}")
    return Schedule(_pp.generate(
        name, num_stages or 0, num_microbatches, num_ranks or 0,
        split_backward, cost_lists,
        comm[0] if comm else None, _values(memory_cap, "memory_cap"),
        os.fspath(cost_file) if cost_file is not None else "", num_replicas,
        insert_transfers, slices, semantics))


# Compiling and running ---------------------------------------------------

@dataclasses.dataclass(frozen=True)
class Param:
    """One weight of the model: a `pp.param` argument of the training step
    (`argument` is its position), with its MLIR type, shape and element
    type. The runtime names it `param<argument>` in weight files (with
    `.stage<s>` where several stages hold one)."""

    argument: int
    type: str
    shape: Tuple[int, ...]
    dtype: str


@dataclasses.dataclass(frozen=True)
class Program:
    """A pipelined MPI training program `pp.compile` built: the executable
    and what it runs. `schedule` is the schedule's name (`auto`'s choice
    is in `remarks`); it runs on `ranks * tensor_parallel * replicas`
    processes (docs/TensorParallel.md). `remarks` are what the compile
    said (the layout planner's and `auto`'s choices); `timeline()` is the
    schedule the program runs."""

    path: pathlib.Path
    schedule: str
    stages: int
    ranks: int
    microbatches: int
    replicas: int
    params: Tuple[Param, ...]
    tensor_parallel: int = 1
    schedule_ir: str = ""
    remarks: Tuple[str, ...] = ()

    def timeline(self) -> Schedule:
        """The materialised schedule the program runs (transfers and
        collectives included), e.g. for `to_ascii()` or `plot()`."""
        return Schedule.from_mlir(self.schedule_ir)

    @property
    def processes(self) -> int:
        """The MPI processes a run needs: ranks times tensor-parallel
        processes times replicas."""
        return self.ranks * self.tensor_parallel * self.replicas


@dataclasses.dataclass(frozen=True)
class RunResult:
    """What a `pp.run` printed and measured: each step's loss (None where it
    was not finite) and wall-clock seconds on rank 0, `params` (with
    `param_stats=True`: each weight's sum and sum of squares after training,
    by argument), the command and its output."""

    losses: List[Optional[float]]
    step_times: List[float]
    params: Dict[int, Tuple[float, float]]
    command: List[str]
    stdout: str
    stderr: str


class ExportError(Error):
    """`pp.torch.export` could not lower the model: torch-mlir's lowering
    died (it runs in a child process, so this interpreter lives on); the
    message names the step's PyTorch ops and their lines."""


class RunError(Error):
    """A `pp.run` failed: the program exited non-zero, printed no loss for
    some step or ran past its timeout. `returncode` (None after a timeout),
    `command`, `stdout` and `stderr` say how; the message ends with the
    tail of stderr."""

    def __init__(self, message: str, *, command: Sequence[str],
                 returncode: Optional[int], stdout: str, stderr: str):
        super().__init__(message)
        self.command = list(command)
        self.returncode = returncode
        self.stdout = stdout
        self.stderr = stderr
        self.diagnostics: List[Diagnostic] = []


@dataclasses.dataclass(frozen=True)
class CompileOption:
    """One option of `pp.compile`: its keyword, the `pp-compile` flag it is
    (the same option of pp's pipelines), what it takes (`kind`: bool, int,
    str, str list, float list or int list; a list also takes one value), its
    help and the values it allows (empty: any)."""

    keyword: str
    flag: str
    kind: str
    help: str
    choices: Tuple[str, ...]


COMPILE_OPTIONS = {entry[0]: CompileOption(entry[0], entry[1], entry[2],
                                           entry[3], tuple(entry[4]))
                   for entry in _pp.compile_options()}
"""Every option `pp.compile` takes, by keyword, read from the table that
makes `pp-compile`'s flags: the same names in snake_case (`replicas` for
--data-parallel, `output` for -o, `opt_level` for -O)."""

_KINDS = {"bool": (bool,), "int": (int,), "str": (str, os.PathLike)}


def _option_value(option: CompileOption, value: object) -> object:
    """`value` as the native module takes the option; TypeError for a value
    of the wrong kind."""
    def wrong():
        return TypeError(f"pp.compile() option '{option.keyword}' takes "
                         f"{option.kind}, got {value!r}")
    if option.kind.endswith(" list"):
        element = {"float list": float, "int list": int}.get(option.kind, str)
        accepted = {float: (int, float), int: (int,), str: (str,)}[element]
        values = [value] if isinstance(value, (str, int, float)) else value
        try:
            values = list(values)
        except TypeError:
            raise wrong() from None
        if any(isinstance(v, bool) or not isinstance(v, accepted)
               for v in values):
            raise wrong()
        return [element(v) for v in values]
    if (not isinstance(value, _KINDS[option.kind])
            or option.kind == "int" and isinstance(value, bool)):
        raise wrong()
    return os.fspath(value) if option.kind == "str" else value


def _model_text(model: Source, filename: Optional[str]) -> Tuple[str, str]:
    """The model's text and the name its diagnostics use: a path-like, or a
    str naming an existing file (one line, ending in .mlir), is read; one
    naming a FIFO or device is refused as such, not parsed as text. A str
    that can only be a path (one line, no MLIR in it: a missing `.mlir`
    file or a directory) is a ValueError, not MLIR text that fails to
    parse."""
    _check_path("model", model)
    if isinstance(model, str) and "\n" not in model:
        if model.endswith(".mlir") and os.path.exists(model):
            model = pathlib.Path(model)
        elif os.path.isdir(model):
            raise ValueError(f"model: '{model}' is a directory; pass the "
                             "path of a .mlir file or the model's MLIR text")
        elif model.endswith(".mlir") and not re.search(r"[{}()=@%]", model):
            raise ValueError(f"model: no file '{model}' (a str is read as a "
                             "file when it names an existing .mlir file, "
                             "else parsed as MLIR text)")
    return _read(model, filename, "model")


def _traced_microbatches(text: str) -> int:
    """The micro-batch count a step traced at the micro-batch shape is
    marked with (`pp.microbatches`); ValueError for one without."""
    counts = set(re.findall(r"pp\.microbatches = (\d+) : i64", text))
    if len(counts) != 1:
        raise ValueError(
            "pp.compile() needs microbatches: the step is not marked with "
            "the micro-batch count it was traced for (pp.microbatches; "
            "exported with whole_batch=True, or not by pp.torch.export)")
    return int(counts.pop())


def compile(model: Source, *, microbatches: Optional[int] = None,
            stages: Optional[int] = None, schedule: str = "1f1b",
            ranks: Optional[int] = None, replicas: Optional[int] = None,
            output: Optional[Source] = None,
            filename: Optional[str] = None, **options) -> Program:
    """Compiles a training step into a pipelined MPI program, in process
    with pp's compiler library (what `pp-compile` runs).

    `model` is MLIR text, or a path (a `pathlib.Path`, or a str naming an
    existing `.mlir` file). `stages`, `microbatches`, `schedule`, `ranks`
    (default one per stage) and `replicas` (data parallel) are pp-compile's
    `--stages`, `--microbatches`, `--schedule`, `--ranks` and
    `--data-parallel` (stages and replicas 1 by default, or with `devices`
    what the layout planner chooses; a search, such as schedule="auto",
    given `ranks` and no `stages` runs whichever of 1, 2 or 3 stages per
    rank it schedules fastest); `options` are its other flags by
    their Python names (`COMPILE_OPTIONS`, listed below). Without
    `microbatches`, the count is the one the step was traced for
    (`pp.microbatches`, `pp.torch.export`'s default); a step traced at the
    whole batch's shape needs it (ValueError).

    The executable goes to `output`, or without one to a temporary
    directory removed when the Program is garbage collected. Raises
    `pp.CompileError` with the located diagnostics when the model or an
    option is rejected (an option's error is located at its pp-compile
    flag, e.g. `--stages`), `TypeError` for an unknown option or a value of
    the wrong kind."""
    text, source_name = _model_text(model, filename)
    if microbatches is None:
        microbatches = _traced_microbatches(text)
    values: Dict[str, object] = {
        "microbatches": microbatches, "schedule": schedule,
    }
    for key, value in (("stages", stages), ("ranks", ranks),
                       ("replicas", replicas)):
        if value is not None:
            values[key] = value
    values.update(options)
    for name in list(values):
        option = COMPILE_OPTIONS.get(name)
        if option is None:
            raise TypeError(f"pp.compile() got an unknown option '{name}'; "
                            f"expected one of {', '.join(COMPILE_OPTIONS)}")
        values[name] = _option_value(option, values[name])
    workdir = None
    if output is not None:
        _check_path("output", output)
    if output is None:
        workdir = tempfile.mkdtemp(prefix="pp-program-")
        output = pathlib.Path(workdir) / "train"
    # Absolute, so that mpiexec finds it from any directory.
    values["output"] = os.path.abspath(os.fspath(output))
    try:
        (path, schedule_name, num_stages, num_ranks, num_microbatches,
         num_replicas, tensor_parallel, params, schedule_ir,
         remarks) = _pp.compile(
             text, source_name, values)
    except BaseException:
        if workdir:
            shutil.rmtree(workdir, ignore_errors=True)
        raise
    program = Program(
        path=pathlib.Path(path), schedule=schedule_name, stages=num_stages,
        ranks=num_ranks, microbatches=num_microbatches,
        replicas=num_replicas,
        params=tuple(Param(argument, type_, tuple(shape), dtype)
                     for argument, type_, shape, dtype in params),
        tensor_parallel=tensor_parallel,
        schedule_ir=schedule_ir, remarks=tuple(remarks))
    if workdir:
        weakref.finalize(program, shutil.rmtree, workdir, True)
    return program


if compile.__doc__:  # not under python -OO
    compile.__doc__ += "\n    Options:\n\n" + "\n".join(
        f"    {o.keyword} ({o.flag}; {o.kind}"
        + (f": {', '.join(o.choices)}" if o.choices and o.keyword != "schedule"
           else "") + f"): {o.help}" for o in COMPILE_OPTIONS.values()) + "\n"


def _tail(text: str, lines: int = 20) -> str:
    """The last `lines` lines of a program's stderr, less the usage text it
    prints after an option error."""
    usage = text.find("usage: ")
    if usage >= 0 and (usage == 0 or text[usage - 1] == "\n"):
        text = text[:usage]
    return "\n".join(text.rstrip().splitlines()[-lines:])


def _mpiexec() -> str:
    for candidate in (_pp.mpiexec(), "mpiexec", "mpirun"):
        if candidate and (os.path.isabs(candidate) and os.access(
                candidate, os.X_OK) or shutil.which(candidate)):
            return candidate
    raise RunError("cannot find mpiexec to run the program with",
                   command=[], returncode=None, stdout="", stderr="")


DataArray = Union[str, "os.PathLike[str]", "numpy.ndarray"]
"""A data argument's samples: an array, an .npy path, or a safetensors
tensor as "FILE.safetensors:NAME"."""

TAG_SAMPLES = 0x53414D50  # runtime/lib/driver/samples.c
_MASK = (1 << 64) - 1


def _splitmix64(x: int) -> int:
    x = (x + 0x9E3779B97F4A7C15) & _MASK
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & _MASK
    return x ^ (x >> 31)


def _pprt_hash(seed: int, keys: Sequence[int]) -> int:
    h = _splitmix64(seed)
    for key in keys:
        h = _splitmix64(h ^ key)
    return h


def sample_order(num_samples: int, step: int, batch: int,
                 seed: int = 1) -> List[int]:
    """The samples of `--data` arrays that 0-based step `step` trains on,
    one per row of its global batch of `batch` rows (micro-batch rows times
    micro-batches times data-parallel replicas; replica r takes rows
    [r*B, (r+1)*B), micro-batch m its m-th block of each). An epoch is
    S = num_samples // batch steps; step s takes positions
    [(s % S) * batch, + batch) of epoch s // S's samples ordered by a hash
    of (seed, epoch, sample), and the num_samples % batch last of each
    epoch's order are left out, as PyTorch's DataLoader with
    drop_last=True: a step never takes a sample twice."""
    _check_count("num_samples", num_samples)
    _check_count("batch", batch)
    if isinstance(step, bool) or not isinstance(step, int):
        raise TypeError(f"step must be an int, got {step!r}")
    if step < 0:
        raise ValueError(f"step must be at least 0, got {step}")
    if num_samples < batch:
        raise ValueError(f"num_samples ({num_samples}) must be at least "
                         f"batch ({batch}): a step takes each row from a "
                         f"different sample")
    steps_per_epoch = num_samples // batch
    epoch = step // steps_per_epoch
    order = sorted(range(num_samples),
                   key=lambda i: (_pprt_hash(seed, [TAG_SAMPLES, epoch, i]), i))
    first = step % steps_per_epoch * batch
    return order[first:first + batch]


def sample_spans(sample_lengths: Source,
                 num_tokens: int) -> List[List[Tuple[int, int]]]:
    """Where `--sample-lengths`' samples lie in a token file of
    `num_tokens` tokens: per line of the index (step s reads line
    s % lines), each sample's (start, length) in file order. Sample k of
    the whole index takes tokens [start, start + length) and the next one
    as its last target, right after sample k - 1, back at 0 where the
    tokens run out (docs/VariableLength.md)."""
    _check_path("sample_lengths", sample_lengths)
    _check_count("num_tokens", num_tokens)
    text, _ = _read(pathlib.Path(sample_lengths), None, "sample_lengths")
    spans: List[List[Tuple[int, int]]] = []
    at = 0
    for line in text.splitlines():
        lengths = [int(v) for v in re.split(r"[\s,]+", line.split("#")[0])
                   if v]
        if lengths:
            spans.append([])
        for length in lengths:
            if length < 1:
                raise ValueError(f"sample_lengths: {length} is not a "
                                 f"positive length")
            if at + length + 1 > num_tokens:
                at = 0
            spans[-1].append((at, length))
            at += length + 1
    return spans


def _data_files(data: Sequence[DataArray], workdir: pathlib.Path) -> str:
    """--data's value: arrays written as .npy files into `workdir`."""
    specs = []
    for i, array in enumerate(data):
        if isinstance(array, (str, os.PathLike)):
            specs.append(os.fspath(array))
            continue
        import numpy
        path = workdir / f"data{i}.npy"
        numpy.save(path, numpy.ascontiguousarray(array))
        specs.append(str(path))
    if any("," in spec for spec in specs):
        raise ValueError(f"data paths must not contain commas: {specs}")
    return ",".join(specs)


def run(program: Program, *, steps: int, ranks: Optional[int] = None,
        microbatches: Optional[int] = None, lr: Optional[float] = None,
        optimizer: Optional[str] = None,
        init_weights: Optional[Source] = None,
        save: Optional[Source] = None, seed: Optional[int] = None,
        param_stats: bool = False, extra_args: Sequence[str] = (),
        data: Optional[Sequence[DataArray]] = None,
        tokens: Optional[Source] = None,
        sample_lengths: Optional[Source] = None,
        choose_plans: bool = False, plan_lookahead: Optional[int] = None,
        document_end: Optional[int] = None,
        samples_per_step: Optional[int] = None,
        long_documents: Optional[str] = None,
        timeout: Optional[float] = None) -> RunResult:
    """Trains with a compiled program for `steps` steps under mpiexec, as
    `mpiexec -n <processes> <program> --steps <steps> ...` does.

    `ranks` is the number of MPI processes (default the program's ranks
    times replicas). Micro-batches are fixed when compiling: `microbatches`,
    when given, must be the program's. `lr`, `optimizer` ("sgd" or "adam"),
    `init_weights` and `save` (safetensors files) and `seed` are the
    program's options of those names; `param_stats=True` adds
    `--print-params`; `extra_args` go to the program as they are (its
    `--help` lists them). `data` trains on arrays indexed by sample along
    their first dimension, one per data argument in argument order (the
    inputs, then the targets): numpy arrays, `.npy` paths or
    `"FILE.safetensors:NAME"` tensors (the program's `--data`); each
    step's rows are the samples `sample_order` gives. `tokens` trains on a
    token file (`--tokens`: flat uint16 ids or a 1-D .npy), and with
    `sample_lengths` on variable-length samples of it (`--sample-lengths`:
    a text index, or a .npy of document lengths; docs/VariableLength.md).
    `choose_plans` and `plan_lookahead` are `--choose-plans` and
    `--plan-lookahead`; `document_end` (`--document-end`) takes each
    document of `tokens`, ending with that id, as a sample, and
    `samples_per_step` (`--samples-per-step`) counts a step's documents;
    `long_documents` (`--long-documents`: "refuse", the default, or
    "split") says what becomes of a document longer than every shape.
    `timeout` bounds the whole run in seconds.

    Returns each step's loss and time (read from the program's `--metrics`
    file); raises `pp.RunError` with the tail of the program's stderr when
    it fails or times out."""
    if not isinstance(program, Program):
        raise TypeError(f"program must be a pp.Program (what pp.compile "
                        f"returns), got {program!r}")
    _check_count("steps", steps)
    for argument, value in (("ranks", ranks),
                            ("samples_per_step", samples_per_step)):
        if value is not None:
            _check_count(argument, value)
    for argument, value in (("plan_lookahead", plan_lookahead),
                            ("document_end", document_end)):
        if value is not None and (isinstance(value, bool) or
                                  not isinstance(value, int) or value < 0):
            raise ValueError(f"{argument} must be an int >= 0, got "
                             f"{value!r}")
    if long_documents not in (None, "split", "refuse"):
        raise ValueError(f"long_documents must be 'split' or 'refuse', got "
                         f"{long_documents!r}")
    for argument, value in (("init_weights", init_weights), ("save", save),
                            ("tokens", tokens),
                            ("sample_lengths", sample_lengths)):
        if value is not None:
            _check_path(argument, value)
    if isinstance(extra_args, (str, bytes)) or not all(
            isinstance(arg, str) for arg in extra_args):
        raise TypeError(f"extra_args must be a sequence of str, got "
                        f"{extra_args!r}")
    if data is not None and (isinstance(data, (str, bytes, os.PathLike))
                             or not isinstance(data, Sequence)):
        raise TypeError(f"data must be a sequence of arrays or paths, one "
                        f"per data argument, got {data!r}")
    if microbatches is not None and microbatches != program.microbatches:
        raise ValueError(f"the program runs {program.microbatches} "
                         f"micro-batches per step (fixed by pp.compile), "
                         f"not {microbatches}")
    processes = ranks if ranks is not None else program.processes
    with tempfile.TemporaryDirectory(prefix="pp-run-") as workdir:
        metrics = pathlib.Path(workdir) / "metrics.jsonl"
        args = [os.fspath(program.path), "--steps", str(steps),
                "--metrics", str(metrics)]
        if lr is not None:
            args += ["--lr", repr(float(lr))]
        if optimizer is not None:
            args += ["--optimizer", optimizer]
        if init_weights is not None:
            args += ["--init-weights", os.fspath(init_weights)]
        if save is not None:
            args += ["--save", os.fspath(save)]
        if seed is not None:
            args += ["--seed", str(seed)]
        if param_stats:
            args.append("--print-params")
        if data is not None:
            args += ["--data", _data_files(data, pathlib.Path(workdir))]
        if tokens is not None:
            args += ["--tokens", os.fspath(tokens)]
        if sample_lengths is not None:
            args += ["--sample-lengths", os.fspath(sample_lengths)]
        if choose_plans:
            args.append("--choose-plans")
        for flag, value in (("--plan-lookahead", plan_lookahead),
                            ("--document-end", document_end),
                            ("--samples-per-step", samples_per_step),
                            ("--long-documents", long_documents)):
            if value is not None:
                args += [flag, str(value)]
        command = [_mpiexec(), "-n", str(processes)] + args + list(extra_args)
        try:
            proc = subprocess.run(command, capture_output=True, text=True,
                                  timeout=timeout)
        except subprocess.TimeoutExpired as expired:
            def text(data):
                return data.decode(errors="replace") if isinstance(
                    data, bytes) else (data or "")
            stderr = text(expired.stderr)
            raise RunError(f"{program.path.name} ran past its timeout of "
                           f"{timeout} s\n{_tail(stderr)}", command=command,
                           returncode=None, stdout=text(expired.stdout),
                           stderr=stderr) from None
        if proc.returncode != 0:
            raise RunError(f"{program.path.name} failed with exit status "
                           f"{proc.returncode}\n{_tail(proc.stderr)}",
                           command=command, returncode=proc.returncode,
                           stdout=proc.stdout, stderr=proc.stderr)
        records = ([json.loads(line) for line in
                    metrics.read_text().splitlines()]
                   if metrics.exists() else [])
    if len(records) != steps:
        raise RunError(f"{program.path.name} reported {len(records)} of "
                       f"{steps} steps\n{_tail(proc.stderr)}",
                       command=command, returncode=proc.returncode,
                       stdout=proc.stdout, stderr=proc.stderr)
    params = {}
    for line in proc.stdout.splitlines():
        fields = line.split()
        if len(fields) == 6 and fields[0] == "param" and fields[2] == "sum":
            params[int(fields[1])] = (float(fields[3]), float(fields[5]))
    return RunResult(losses=[r["loss"] for r in records],
                     step_times=[r["seconds"] for r in records],
                     params=params, command=command, stdout=proc.stdout,
                     stderr=proc.stderr)
