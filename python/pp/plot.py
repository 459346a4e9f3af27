"""Schedule.plot: a simulated timeline over each rank's activation memory,
drawn with matplotlib (imported only here, so pp works without it)."""

from __future__ import annotations

import pathlib
from typing import TYPE_CHECKING, Dict, List, Optional

from . import _pp

if TYPE_CHECKING:
    from . import Action, Schedule

# The computations by their action names (Action.kind), coloured and named
# as pp-translate's SVG timeline shows them: one vocabulary, the C++ one
# (include/pp/Dialect/PP/IR/ActionVocabulary.h).
_COMPUTATIONS = [(json, description, colour)
                 for json, _, _, phase, description, colour
                 in _pp.action_vocabulary() if phase is not None]
PHASE_COLOURS: Dict[str, str] = {
    json: colour for json, _, colour in _COMPUTATIONS}
PHASE_NAMES: Dict[str, str] = {
    json: description for json, description, _ in _COMPUTATIONS}


def _figure_class():
    try:
        from matplotlib.figure import Figure
    except ImportError as error:
        raise ImportError(
            "Schedule.plot needs matplotlib: pip install matplotlib "
            "(scripts/setup.sh installs it in ~/.cache/pp-python-venv)"
        ) from error
    return Figure


def _label(action: "Action", schedule: "Schedule") -> str:
    """The micro-batch, or `stage.mb` where a rank runs several stages."""
    several = schedule.num_stages > schedule.num_ranks
    return (f"{action.stage}.{action.microbatch}" if several
            else str(action.microbatch))


def _draw_timeline(ax, schedule: "Schedule", actions: List["Action"]) -> None:
    num_ranks = schedule.num_ranks
    boxes: Dict[tuple, list] = {}
    for action in actions:
        width = action.end - action.start
        row = num_ranks - 1 - action.rank
        boxes.setdefault((row, action.kind), []).append((action.start, width))
        ax.text(action.start + width / 2, row + 0.5, _label(action, schedule),
                ha="center", va="center", fontsize=6, color="white")
    for (row, kind), spans in boxes.items():
        ax.broken_barh(spans, (row + 0.1, 0.8), facecolors=PHASE_COLOURS[kind],
                       edgecolors="white", linewidth=0.5)
    ax.set_yticks([num_ranks - 1 - r + 0.5 for r in range(num_ranks)])
    ax.set_yticklabels([f"rank {r}" for r in range(num_ranks)])
    ax.set_ylim(0, num_ranks)
    kinds = [k for k in PHASE_COLOURS if any(a.kind == k for a in actions)]
    handles = [ax.bar(0, 0, color=PHASE_COLOURS[k], label=PHASE_NAMES[k])
               for k in kinds]
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1),
              fontsize=7, frameon=False)


def _draw_memory(ax, schedule: "Schedule", actions: List["Action"]) -> None:
    for rank in range(schedule.num_ranks):
        times, held = [0.0], [0.0]
        for action in actions:
            if action.rank == rank and action.kind in PHASE_COLOURS:
                times.append(action.end)
                held.append(action.memory)
        line, = ax.step(times, held, where="post", label=f"rank {rank}")
        cap = schedule.memory_caps[rank]
        if cap is not None:
            ax.axhline(cap, color=line.get_color(), linestyle=":",
                       linewidth=1)
    ax.set_ylabel("activation memory")
    ax.set_xlabel("time")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1), fontsize=7,
              frameon=False)


def plot_schedule(schedule: "Schedule", path=None, *,
                  semantics: Optional[str] = None, title: Optional[str] = None):
    """See Schedule.plot."""
    figure_class = _figure_class()
    timeline = schedule.timeline(semantics)
    computes = [a for a in timeline if a.kind in PHASE_COLOURS]
    makespan = max((a.end for a in timeline), default=0.0)
    figure = figure_class(figsize=(max(6.0, 0.25 * makespan + 2), 1.0 +
                                   0.45 * schedule.num_ranks + 1.8))
    top, bottom = figure.subplots(
        2, 1, sharex=True,
        gridspec_kw={"height_ratios": [schedule.num_ranks, 2.5]})
    _draw_timeline(top, schedule, computes)
    _draw_memory(bottom, schedule, timeline)
    bottom.set_xlim(0, makespan)
    simulation = schedule.simulate(semantics)
    top.set_title(title or (
        f"{schedule.name}: {schedule.num_stages} stages, "
        f"{schedule.num_ranks} ranks, {schedule.num_microbatches} "
        f"micro-batches; makespan {simulation.makespan:g}, bubble "
        f"{simulation.bubble:.1%}"), fontsize=9)
    figure.tight_layout()
    if path is not None:
        # No date or random ids in the file, so that a saved plot changes
        # only with the schedule; SVG text stays text.
        path = pathlib.Path(path)
        metadata = {"Date": None} if path.suffix in (".svg", ".pdf") else {}
        import matplotlib
        with matplotlib.rc_context({"svg.hashsalt": "pp",
                                    "svg.fonttype": "none"}):
            figure.savefig(path, metadata=metadata)
    return figure
