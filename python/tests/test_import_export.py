"""Schedule.from_json/from_csv/from_mlir and to_json/to_csv: the formats
pp-translate reads and writes, in process."""

import json
import pathlib

import pytest


# (schedule, stages, ranks)
PROBLEMS = [("1f1b", 4, 4), ("zb-h1", 4, 4), ("interleaved-1f1b", 8, 4),
            ("dualpipev", 8, 4)]


@pytest.fixture(params=PROBLEMS, ids=[p[0] for p in PROBLEMS])
def schedule(pp, request):
    """Each receive right before its consumer, where PyTorch's CSV waits for
    it (the CSV importer puts it there), so that the CSV round-trips."""
    name, stages, ranks = request.param
    generated = pp.schedule(name, num_stages=stages, num_ranks=ranks,
                            num_microbatches=8,
                            costs=pp.Costs(forward=1.5, comm=0.5),
                            memory_cap=0 if name != "zb-h1" else 12,
                            insert_transfers=False)
    return generated.insert_transfers(semantics="async")


def test_json_round_trip(pp, schedule):
    text = schedule.to_json()
    assert json.loads(text)["format"] == "pp-schedule-v1"
    again = pp.Schedule.from_json(text).verify()
    assert again.to_json() == text
    assert again.simulate() == schedule.simulate()


def test_csv_round_trip(pp, schedule):
    text = schedule.to_csv()
    assert len(text.splitlines()) == schedule.num_ranks
    again = pp.Schedule.from_csv(text).verify()
    assert again.to_csv() == text
    assert again.stage_rank == schedule.stage_rank


def test_mlir_round_trip(pp, schedule):
    again = pp.Schedule.from_mlir(schedule.to_mlir())
    assert again.to_mlir() == schedule.to_mlir()


def test_files(pp, schedule, tmp_path):
    for suffix, write in [(".json", schedule.to_json),
                          (".csv", schedule.to_csv)]:
        path = tmp_path / ("s" + suffix)
        text = write(path)
        assert path.read_text() == text
        assert pp.Schedule.load(path).verify().to_csv() == schedule.to_csv()
    with pytest.raises(ValueError, match="cannot tell the format"):
        pp.Schedule.load(tmp_path / "s.txt")


def test_special_files_are_refused(pp, tmp_path):
    """A FIFO or a device given as a path fails at once instead of blocking
    or reading without end."""
    import os
    fifo = tmp_path / "s.json"
    os.mkfifo(fifo)
    for path in (fifo, pathlib.Path("/dev/zero")):
        with pytest.raises(ValueError, match="it is not a regular file"):
            pp.Schedule.from_json(path)
        with pytest.raises(ValueError, match="it is not a regular file"):
            pp.compile(path, stages=2, microbatches=2)
    # A str naming a FIFO was compiled as MLIR text ("expected operation
    # name in quotes").
    model = tmp_path / "model.mlir"
    os.mkfifo(model)
    with pytest.raises(ValueError, match="it is not a regular file"):
        pp.compile(str(model), stages=2, microbatches=2)


def test_csv_without_transfers(pp):
    csv = "0F0,0F1,0B0,0B1\n1F0,1B0,1F1,1B1\n"
    with pytest.raises(pp.VerifyError):
        pp.Schedule.from_csv(csv).verify()
    s = pp.Schedule.from_csv(csv, insert_transfers=True).verify()
    assert s.to_csv().splitlines()[0].startswith("0F0,0SEND_F0,")


def test_bad_json_is_located(pp):
    with pytest.raises(pp.Error) as info:
        pp.Schedule.from_json('{"format": 3}', filename="bad.json")
    diag = info.value.diagnostics[0]
    assert diag.location == "bad.json:1:12"
    assert "'format' must be \"pp-schedule-v1\"" in diag.message
    assert "bad.json:1:12: error: 'format'" in str(info.value)


def test_bad_csv_is_located(pp, tmp_path):
    path = tmp_path / "bad.csv"
    path.write_text("0F0,0X1\n")
    with pytest.raises(pp.Error) as info:
        pp.Schedule.from_csv(path)
    assert info.value.diagnostics[0].location.startswith(f"{path}:1:")


def test_mlir_from_pp_opt(pp, pp_opt):
    """A schedule next to the model's functions, as pp-opt prints it."""
    import subprocess
    from conftest import REPO
    text = subprocess.run(
        [pp_opt, str(REPO / "examples" / "mlp" / "mlp.mlir"),
         "--pp-schedule-pipeline=num-stages=2 num-microbatches=4 "
         "schedule=zb-h1"], capture_output=True, text=True,
        check=True).stdout
    s = pp.Schedule.from_mlir(text, filename="mlp.mlir").verify()
    assert (s.name, s.num_stages, s.num_microbatches) == ("zb-h1", 2, 4)
    assert "func.func" in s.to_mlir()
