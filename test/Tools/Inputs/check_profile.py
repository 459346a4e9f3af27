"""Checks a measured pp-profile-v1 file: one entry per stage, in order, with
positive forward times (B and W may be ~0 where a stage has no input to
differentiate or no weight; activation memory 0 where its backward reads
nothing of its forward, as a bias add's), stash within activation memory, timed optimizer steps, a set-up within the step, and a measured
step. With
--schedule, also checks that the #pp.cost of the pp.schedule read from
stdin carries the profile's numbers; with --same-memory OTHER, that OTHER
(a profile of the same stages run another way) reports the same memory;
with --variants-longest-first N, that every stage lists N shape variants
in order, of positive forward times, and that a longer variant's forward
takes longer and holds more memory than a shorter one's."""
import json
import re
import sys

path, stages = sys.argv[1], int(sys.argv[2])
with open(path) as f:
    prof = json.load(f)
assert [s["stage"] for s in prof["stages"]] == list(range(stages)), prof
for s in prof["stages"]:
    assert s["forward"] > 0 and s["activation_memory"] >= 0, s
    assert s["backward_input"] >= 0 and s["backward_weight"] >= 0, s
    assert 0 <= s["stash_memory"] <= s["activation_memory"], s
for key in ("backward_input", "backward_weight", "activation_memory",
            "stash_memory"):
    assert sum(s[key] for s in prof["stages"]) > 0, (key, prof)
assert prof["transfer"] >= 0 and prof["meta"]["step_time"] > 0, prof
# Every stage's optimizer step is timed, and on one process the set-up is
# the step's time outside actions and updates.
assert all(s["optimizer"] > 0 for s in prof["stages"]), prof
meta = prof["meta"]
assert 0 <= prof["step_overhead"] < meta["step_time"], prof
if meta["processes"] == 1:
    outside = meta["step_time"] - meta["step_action_time"] - sum(
        s["optimizer"] for s in prof["stages"])
    assert abs(prof["step_overhead"] - outside) <= 0.5 * meta["step_time"], \
        (outside, prof)
print("profile ok: %d stages" % stages)

if "--schedule" in sys.argv:
    text = sys.stdin.read()
    cost = re.search(r"#pp\.cost<([^>]*)>", text).group(1)
    fields = {"forward": "forward", "backward_input": "backward_input",
              "backward_weight": "backward_weight",
              "activation": "activation_memory", "optimizer": "optimizer"}
    for attr, key in fields.items():
        listed = re.search(attr + r" = \[([^\]]*)\]", cost).group(1)
        got = [float(v) for v in listed.split(",")]
        want = [s[key] for s in prof["stages"]]
        assert all(abs(a - b) <= 1e-6 * max(abs(b), 1e-9)
                   for a, b in zip(got, want)) and len(got) == stages, \
            (attr, got, want)
    overhead = float(re.search(r"step_overhead = ([0-9.e+-]+)", cost).group(1))
    assert abs(overhead - prof["step_overhead"]) <= 1e-6 * prof["step_overhead"]
    print("schedule carries the profile")

if "--same-memory" in sys.argv:
    with open(sys.argv[sys.argv.index("--same-memory") + 1]) as f:
        other = json.load(f)
    for key in ("activation_memory", "stash_memory"):
        mine = [s[key] for s in prof["stages"]]
        theirs = [s[key] for s in other["stages"]]
        assert mine == theirs, (key, mine, theirs)
    print("same stages")

if "--variants-longest-first" in sys.argv:
    count = int(sys.argv[sys.argv.index("--variants-longest-first") + 1])
    for s in prof["stages"]:
        variants = s["variants"]
        assert [v["variant"] for v in variants] == list(range(count)), s
        for v in variants:
            assert v["forward"] > 0 and v["backward_input"] >= 0, v
            assert 0 <= v["stash_memory"] <= v["activation_memory"], v
        for longer, shorter in zip(variants, variants[1:]):
            assert longer["forward"] > shorter["forward"], (longer, shorter)
            assert longer["activation_memory"] > shorter["activation_memory"], \
                (longer, shorter)
    print("variants ok: %d per stage, the longer slower" % count)
