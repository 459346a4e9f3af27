"""pp from Python: pipeline schedules generated, imported, verified,
simulated and plotted in process by pp's C++ libraries (docs/Python.md).

    >>> import pp
    >>> s = pp.schedule("1f1b", num_stages=4, num_microbatches=8)
    >>> s.verify().simulate().makespan
    33.0
"""

from __future__ import annotations

import dataclasses
import os
import pathlib
from typing import List, Mapping, Optional, Sequence, Tuple, Union

from . import _pp
from ._pp import Diagnostic, Error, VerifyError

__all__ = [
    "SCHEDULES", "Action", "Costs", "Diagnostic", "Error", "Schedule",
    "Simulation", "VerifyError", "schedule",
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
    name (F, B, W, BW, SEND_F, RECV_F, SEND_B, RECV_B, ALLREDUCE, OPT);
    `microbatch` is -1 for all-reduces and optimizer steps; `memory` is the
    activation memory its rank holds after it."""

    rank: int
    kind: str
    stage: int
    microbatch: int
    start: float
    end: float
    memory: float


def _values(value: Optional[PerStage]) -> List[float]:
    if value is None:
        return []
    if isinstance(value, (int, float)):
        return [float(value)]
    return [float(v) for v in value]


def _read(source: Source, filename: Optional[str]) -> Tuple[str, str]:
    """The text of `source` and the name its diagnostics use."""
    if isinstance(source, os.PathLike):
        path = pathlib.Path(source)
        return path.read_text(), filename or str(path)
    return source, filename or "<string>"


def _write(text: str, path: Optional[Source]) -> str:
    if path is not None:
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
                         semantics: str = "rendezvous") -> "Schedule":
        """Runs pp-insert-transfers on the schedule; returns it. With
        `semantics="rendezvous"` (the default) the transfers form exchange
        groups that cannot deadlock when a send waits for its receive
        (NCCL); `"async"` leaves each receive right before its consumer."""
        self._native.insert_transfers(num_replicas, semantics)
        return self

    def verify(self, semantics: str = "async") -> "Schedule":
        """Runs pp-verify-schedule; returns the schedule if it is complete,
        ordered, deadlock free and within its memory caps, else raises
        `pp.VerifyError` carrying the located diagnostics. `semantics` is
        `async` (sends never block) or `rendezvous`."""
        self._native.verify(semantics)
        return self

    def simulate(self, semantics: str = "async",
                 all_reduce_cost: Optional[PerStage] = None) -> Simulation:
        """Runs pp-simulate under the schedule's costs: makespan, idle time
        and peak memory per rank, and the bubble."""
        makespan, idle, peak = self._native.simulate(
            semantics, _values(all_reduce_cost))
        total = makespan * len(idle)
        return Simulation(makespan=makespan, idle=idle,
                          bubble=sum(idle) / total if total > 0 else 0.0,
                          peak_memory=peak)

    def timeline(self, semantics: str = "async") -> List[Action]:
        """Every action with when it runs under the schedule's costs (the
        simulation of `simulate`, all-reduces free), rank by rank."""
        return [Action(*entry) for entry in self._native.timeline(semantics)]

    def plot(self, path: Optional[Source] = None, *,
             semantics: str = "async", title: Optional[str] = None):
        """Draws the timeline (one row per rank, boxes coloured by phase and
        labelled with the micro-batch) over each rank's activation memory,
        and saves it to `path` (PNG, SVG or any format matplotlib knows by
        the suffix). Returns the matplotlib Figure. Needs matplotlib."""
        from . import plot
        return plot.plot_schedule(self, path, semantics=semantics,
                                  title=title)


def schedule(name: str, *, num_microbatches: int,
             num_stages: Optional[int] = None,
             num_ranks: Optional[int] = None, split_backward: bool = False,
             costs: Union[Costs, Mapping[str, object], None] = None,
             memory_cap: Optional[PerStage] = None,
             cost_file: Optional[Source] = None, num_replicas: int = 1,
             insert_transfers: bool = True) -> Schedule:
    """Generates a schedule with pp-schedule, then (by default) makes its
    transfers explicit with pp-insert-transfers.

    `name` is one of `SCHEDULES`, `auto` (the fastest schedule found within
    the memory caps) or `exact` (auto's exact search alone). Without
    `num_stages` the cost file gives it; `num_ranks` defaults to one rank
    per stage. `costs` (a `Costs` or a mapping of its fields) and
    `memory_cap` (one value for every rank, 0 for none, or one per rank)
    override `cost_file` (a `pp-profile-v1` JSON file). `num_replicas` > 1
    adds the data-parallel all-reduces. Raises `pp.Error` with pp-schedule's
    diagnostics when the schedule does not fit the problem."""
    if costs is None:
        costs = Costs()
    elif not isinstance(costs, Costs):
        costs = Costs(**costs)
    cost_lists = [_values(costs.forward), _values(costs.backward_input),
                  _values(costs.backward_weight), _values(costs.activation),
                  _values(costs.stash)]
    return Schedule(_pp.generate(
        name, num_stages or 0, num_microbatches, num_ranks or 0,
        split_backward, cost_lists,
        None if costs.comm is None else float(costs.comm), _values(memory_cap),
        os.fspath(cost_file) if cost_file is not None else "", num_replicas,
        insert_transfers))
