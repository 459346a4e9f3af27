"""Checks a measured pp-profile-v1 file: one entry per stage, in order, with
positive times and memory (B may be ~0 where a stage has no input to
differentiate), stash within activation memory, and a measured step. With
--schedule, also checks that the #pp.cost of the pp.schedule read from
stdin carries the profile's numbers."""
import json
import re
import sys

path, stages = sys.argv[1], int(sys.argv[2])
with open(path) as f:
    prof = json.load(f)
assert [s["stage"] for s in prof["stages"]] == list(range(stages)), prof
for s in prof["stages"]:
    assert s["forward"] > 0 and s["backward_weight"] > 0, s
    assert s["backward_input"] >= 0, s
    assert 0 < s["stash_memory"] <= s["activation_memory"], s
assert sum(s["backward_input"] for s in prof["stages"]) > 0, prof
assert prof["transfer"] >= 0 and prof["meta"]["step_time"] > 0, prof
print("profile ok: %d stages" % stages)

if "--schedule" in sys.argv:
    text = sys.stdin.read()
    cost = re.search(r"#pp\.cost<([^>]*)>", text).group(1)
    fields = {"forward": "forward", "backward_input": "backward_input",
              "backward_weight": "backward_weight",
              "activation": "activation_memory"}
    for attr, key in fields.items():
        listed = re.search(attr + r" = \[([^\]]*)\]", cost).group(1)
        got = [float(v) for v in listed.split(",")]
        want = [s[key] for s in prof["stages"]]
        assert all(abs(a - b) <= 1e-6 * max(abs(b), 1e-9)
                   for a, b in zip(got, want)) and len(got) == stages, \
            (attr, got, want)
    print("schedule carries the profile")
