#!/usr/bin/env python3
"""Writes the large or pathological importer inputs of import-limits.test.

  gen_large_inputs.py deep DEPTH OUT      a schedule whose name nests DEPTH arrays
  gen_large_inputs.py minified N OUT      one rank, N micro-batches, one line
  gen_large_inputs.py csv-row N OUT       the same actions as one CSV row
"""
import json
import sys


def schedule(num_mbs, name="big"):
    actions = [{"op": "F", "stage": 0, "mb": mb} for mb in range(num_mbs)]
    actions += [{"op": "BW", "stage": 0, "mb": mb} for mb in range(num_mbs)]
    return {"format": "pp-schedule-v1", "name": name, "num_ranks": 1,
            "num_stages": 1, "num_microbatches": num_mbs, "stage_rank": [0],
            "ranks": [actions]}


def main():
    kind, count, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    with open(out, "w") as f:
        if kind == "deep":
            # Valid JSON, so only the depth is wrong.
            f.write('{"format": "pp-schedule-v1", "name": ' + "[" * count +
                    "]" * count + "}\n")
        elif kind == "minified":
            f.write(json.dumps(schedule(count), separators=(",", ":")))
        elif kind == "csv-row":
            f.write(",".join([f"0F{mb}" for mb in range(count)] +
                             [f"0B{mb}" for mb in range(count)]) + "\n")
        else:
            sys.exit(f"unknown input kind {kind!r}")


if __name__ == "__main__":
    main()
