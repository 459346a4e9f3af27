#!/usr/bin/env python3
"""Dumps the action orders of torch.distributed.pipelining's schedule classes
as PyTorch CSVs, the test inputs of test/Target/pytorch-schedules.test, and
compute-only ScheduleInterleavedZeroBubble orders for more (p, m, v), which
test/Target/pytorch-interleaved-zb-order.test compares with pp's
`interleaved-zb`.

Run with a Python that has torch (2.15 made the committed files):

    python3 test/Target/Inputs/pytorch/generate.py [output-dir]

No process group is needed: each class builds the order of every rank in
its constructor, which only asks its stages for their index, the number of
stages and the group's size and rank. The files are written by PyTorch's own
`_dump_csv` (csv.writer over `pipeline_order`); the runtime classes also
write their lowered `compute_comms` form (transfers, waits, UNSHARD,
RESHARD and REDUCE_GRAD added), PyTorch's default dump.
"""

import os
import sys

import torch
from torch.distributed.pipelining import schedules


class FakeStage:
    """What a schedule's constructor reads of a `PipelineStage`."""

    def __init__(self, stage_index, num_stages, group_size):
        self.stage_index = stage_index
        self.num_stages = num_stages
        self.group_size = group_size
        self.group_rank = 0
        self.submod = None  # not a module: no torch.compile check


# (class, ranks p, micro-batches m, stages per rank v); p <= 4, m <= 8.
CONFIGS = [
    ("ScheduleGPipe", 2, 4, 1),
    ("ScheduleGPipe", 4, 8, 1),
    ("Schedule1F1B", 2, 4, 1),
    ("Schedule1F1B", 4, 8, 1),
    ("ScheduleInterleaved1F1B", 4, 8, 1),  # PyTorch's runtime 1F1B
    ("ScheduleInterleaved1F1B", 2, 4, 2),
    ("ScheduleInterleaved1F1B", 4, 8, 2),
    ("ScheduleLoopedBFS", 2, 4, 2),
    ("ScheduleInterleavedZeroBubble", 2, 4, 2),
    ("ScheduleInterleavedZeroBubble", 4, 8, 2),
    ("ScheduleZBVZeroBubble", 2, 4, 2),
    ("ScheduleZBVZeroBubble", 4, 8, 2),
    ("ScheduleDualPipeV", 2, 4, 2),
    ("ScheduleDualPipeV", 4, 8, 2),
]

# Compute-only orders of ScheduleInterleavedZeroBubble: p in {2, 3, 4},
# m in {4, 8, 12}, v in {2, 3} (PyTorch takes them all: m is a multiple of
# its max(1, m // p) rounds). Those CONFIGS already has are written there.
ORDER_CONFIGS = [
    ("ScheduleInterleavedZeroBubble", p, m, v)
    for p in (2, 3, 4) for m in (4, 8, 12) for v in (2, 3)
    if (p, m, v) not in ((2, 4, 2), (4, 8, 2))
]


def rank0_stages(name, p, v):
    """The stages rank 0 holds: 0 and 2p - 1 in a V, else 0, p, 2p, ..."""
    if name in ("ScheduleZBVZeroBubble", "ScheduleDualPipeV"):
        return [0, 2 * p - 1]
    return [i * p for i in range(v)]


def build(name, p, m, v):
    cls = getattr(schedules, name)
    if issubclass(cls, schedules.PipelineScheduleSingle):
        return cls(FakeStage(0, p, p), m)
    stages = [FakeStage(s, p * v, p) for s in rank0_stages(name, p, v)]
    return cls(stages, m)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(__file__)
    for name, p, m, v in CONFIGS + ORDER_CONFIGS:
        schedule = build(name, p, m, v)
        # v only where the class takes any number of stages per rank.
        looped = name in ("ScheduleInterleaved1F1B", "ScheduleLoopedBFS",
                          "ScheduleInterleavedZeroBubble")
        base = os.path.join(out, f"{name}-p{p}-m{m}" + (f"-v{v}" if looped else ""))
        if isinstance(schedule, schedules._PipelineScheduleRuntime):
            schedule._dump_csv(base + ".csv", format="compute_only")
            if (name, p, m, v) in CONFIGS:
                schedule._dump_csv(base + "-comms.csv", format="compute_comms")
        else:
            # The single-stage classes have an order but no writer of their
            # own; PipelineScheduleMulti's writes it.
            schedules.PipelineScheduleMulti._dump_csv(schedule, base + ".csv")
    print(f"torch {torch.__version__}: {len(CONFIGS) + len(ORDER_CONFIGS)} "
          f"schedules in {out}")


if __name__ == "__main__":
    main()
