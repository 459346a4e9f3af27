"""Checks pp-compile's choice of a stage count (the remarks in the file
REMARKS): the count chosen has the least makespan of those tried (the
fewest stages of equally fast ones), and auto's remark reports that
makespan on that many stages."""
import re
import sys

with open(sys.argv[1]) as f:
    text = f.read()
chosen = re.search(r"remark: --schedule \S+ on (\d+) ranks: (\d+) stages, "
                   r"the fastest of (.*)", text)
ranks, stages = int(chosen[1]), int(chosen[2])
tried = {int(count): float(makespan) for count, makespan in
         re.findall(r"(\d+) stages: makespan (\S+?)(?:;|$)", chosen[3])}
best = min(tried, key=lambda count: (tried[count], count))
assert stages == best, (stages, tried)
auto = re.search(r"remark: auto: makespan (\S+) s .*; (\d+) stages on (\d+) "
                 r"ranks", text)
assert (int(auto[2]), int(auto[3])) == (stages, ranks), auto[0]
assert abs(float(auto[1]) - tried[stages]) <= 1e-11 * tried[stages], auto[0]
print(f"chose {stages} stages on {ranks} ranks, the fastest of {len(tried)}")
