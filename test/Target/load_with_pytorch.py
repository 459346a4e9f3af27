#!/usr/bin/env python3
"""Loads a schedule CSV with torch.distributed.pipelining's own reader.

    load_with_pytorch.py SCHEDULE.csv [--lower LOWERED.csv]

Reads the file with PipelineScheduleMulti._load_csv (csv.reader and
_Action.from_str, then PyTorch's schedule validation), checks that every
cell reads back as the text it was written as, and prints the stage to rank
mapping PyTorch infers. With --lower, the compute-only file also goes
through _PipelineScheduleRuntime._load_csv, which adds PyTorch's transfers,
waits, UNSHARD/RESHARD and REDUCE_GRAD, and the result is written with
PyTorch's `_dump_csv` to LOWERED.csv. No process group is needed.
"""

import csv
import os
import sys

from torch.distributed.pipelining import schedules

# The stand-in for a PipelineStage that the dumps were generated with.
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "Inputs", "pytorch"))
from generate import FakeStage  # noqa: E402


def main():
    path = sys.argv[1]
    lowered = sys.argv[3] if sys.argv[2:3] == ["--lower"] else None
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    actions = [a for row in rows for cell in row
               if (a := schedules._Action.from_str(cell)) is not None]
    leaves = [s for a in actions for s in (a.sub_actions or (a,))]
    num_stages = 1 + max(a.stage_index for a in leaves)
    num_mbs = 1 + max(a.microbatch_index or 0 for a in leaves)
    stages = [FakeStage(0, num_stages, len(rows))]

    schedule = schedules._PipelineScheduleRuntime(stages, num_mbs)
    schedules.PipelineScheduleMulti._load_csv(schedule, path)
    for rank, row in enumerate(rows):
        read = [str(a) if a is not None else "" for a in schedule.pipeline_order[rank]]
        if read != [cell.strip() for cell in row]:
            sys.exit(f"rank {rank} reads back as {read}, not {row}")
    mapping = schedule.stage_index_to_group_rank
    print("stage_rank", [mapping[s] for s in range(num_stages)])
    if lowered:
        schedule = schedules._PipelineScheduleRuntime(stages, num_mbs)
        schedule._load_csv(path)
        schedule._dump_csv(lowered, format="compute_comms")


if __name__ == "__main__":
    main()
