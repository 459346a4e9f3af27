"""Checks that `auto`'s choice is the fastest on the costs it was given:
the makespan of its remark (in the file AUTO) is at most each fixed
schedule's pp-simulate makespan (in the files FIXED...) on the same
costs, within the 12 printed digits."""
import re
import sys

auto_path, fixed_paths = sys.argv[1], sys.argv[2:]
with open(auto_path) as f:
    auto = float(re.search(r"remark: auto: makespan (\S+) s", f.read())[1])
for path in fixed_paths:
    with open(path) as f:
        fixed = float(re.search(r"remark: makespan (\S+), bubble",
                                f.read())[1])
    assert auto <= fixed * (1 + 1e-11), (path, auto, fixed)
print(f"auto is the fastest of {len(fixed_paths) + 1}")
