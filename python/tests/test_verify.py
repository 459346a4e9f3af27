"""Schedule.verify: pp-verify-schedule's located diagnostics as a
pp.VerifyError."""

import pytest


def swap_first_forward_and_backward(text):
    """Moves rank 1's first backward before its forward."""
    forward = '      {"op":"F","stage":1,"mb":0},\n'
    backward = '      {"op":"BW","stage":1,"mb":0},\n'
    assert forward + backward in text
    return text.replace(forward + backward, backward + forward)


def test_out_of_order_is_located(pp):
    text = pp.schedule("1f1b", num_stages=2, num_microbatches=2).to_json()
    bad = pp.Schedule.from_json(swap_first_forward_and_backward(text),
                                filename="bad.json")
    with pytest.raises(pp.VerifyError) as info:
        bad.verify()
    error = info.value
    assert isinstance(error, pp.Error)
    [diag] = error.diagnostics
    assert diag.severity == "error"
    assert diag.location == "bad.json:30:7"
    assert ("backward of stage 1 micro-batch 0 runs before the forward of "
            "stage 1 micro-batch 0") in diag.message
    assert diag.notes[0].location == "bad.json:31:7"
    assert "bad.json:30:7: error: 'pp.compute' op backward" in str(error)


def test_mlir_locations(pp):
    text = pp.schedule("gpipe", num_stages=2, num_microbatches=1).to_mlir()
    lines = text.splitlines()
    recv = next(i for i, l in enumerate(lines) if "pp.recv" in l)
    del lines[recv]
    with pytest.raises(pp.VerifyError) as info:
        pp.Schedule.from_mlir("\n".join(lines), filename="s.mlir").verify()
    assert any(d.location.startswith("s.mlir:") for d in
               info.value.diagnostics)


def test_memory_cap(pp):
    # A generator that cannot keep within a cap is an error at once.
    with pytest.raises(pp.Error, match="schedule 'gpipe' holds 8 units of "
                       "activation memory on rank 0, over its memory cap "
                       "of 2"):
        pp.schedule("gpipe", num_stages=4, num_microbatches=8, memory_cap=2)
    # 1f1b runs fewer warm-up forwards instead.
    s = pp.schedule("1f1b", num_stages=4, num_microbatches=8, memory_cap=2)
    assert s.verify() is s
    assert max(s.simulate().peak_memory) == 2
    # A schedule read from a file is held to its cap by verify().
    text = pp.schedule("gpipe", num_stages=4, num_microbatches=8).to_json()
    capped = pp.Schedule.from_json(text.replace('{', '{"memory_cap": 2, ', 1))
    with pytest.raises(pp.VerifyError, match="above the schedule's "
                       "memory_cap of 2") as info:
        capped.verify()
    assert len(info.value.diagnostics) == 4


def test_rendezvous(pp):
    s = pp.schedule("1f1b", num_stages=4, num_microbatches=8,
                    insert_transfers=False).insert_transfers(semantics="async")
    assert s.verify() is s
    # With each receive right before its consumer, 1F1B's sends wait for
    # receives that wait for sends under rendezvous.
    with pytest.raises(pp.VerifyError, match="deadlock") as info:
        s.verify("rendezvous")
    assert "only with rendezvous transfers" in str(info.value)
    # The order for rendezvous semantics is safe (test_schedules checks them
    # all), and the schedule records them: verify checks them by default.
    safe = pp.schedule("1f1b", num_stages=4, num_microbatches=8,
                       semantics="rendezvous")
    assert safe.verify("rendezvous") is safe
    assert safe.verify() is safe
    assert safe.simulate().makespan == safe.simulate("rendezvous").makespan
    with pytest.raises(pp.Error, match="unknown semantics"):
        s.verify("eager")
