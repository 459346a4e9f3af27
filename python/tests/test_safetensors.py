"""pp.torch.write_safetensors and read_safetensors (the `safetensors`
package): every element type the runtime reads, at ranks 0 to 6, with the
header's metadata; element types the runtime does not read are a
TypeError either way."""

import pytest

np = pytest.importorskip("numpy")

ARRAYS = {
    "f32": np.arange(24, dtype=np.float32).reshape(2, 3, 4) / 7,
    "f16": np.linspace(-1, 1, 6, dtype=np.float16).reshape(6, 1),
    # Rank 0 stays rank 0 (a checkpoint's counts are I64 scalars).
    "i64": np.array(-(2**40), dtype=np.int64),
    "i32": np.arange(-3, 3, dtype=np.int32),
    "bool": np.array([[True, False], [False, True]]),
    "rank6": np.arange(2 * 2 * 3 * 4 * 4 * 2, dtype=np.float32).reshape(
        2, 2, 3, 4, 4, 2),
}


def test_round_trip(pp, tmp_path):
    import pp.torch
    from safetensors import safe_open
    path = tmp_path / "w.safetensors"
    # A transposed view is written in its logical (row-major) order.
    arrays = dict(ARRAYS, transposed=ARRAYS["f32"][0].T)
    pp.torch.write_safetensors(path, arrays, {"names": "{}"})
    read = pp.torch.read_safetensors(path)
    assert set(read) == set(arrays)
    for name, array in arrays.items():
        assert read[name].dtype == array.dtype, name
        assert read[name].shape == array.shape, name
        assert np.array_equal(read[name], array), name
    with safe_open(str(path), framework="np") as f:
        assert f.metadata() == {"names": "{}"}
        assert {key: f.get_slice(key).get_dtype() for key in f.keys()} == {
            "f32": "F32", "f16": "F16", "i64": "I64", "i32": "I32",
            "bool": "BOOL", "rank6": "F32", "transposed": "F32"}


def test_unstored_types(pp, tmp_path):
    import pp.torch
    from safetensors.numpy import save_file
    with pytest.raises(TypeError, match="'w' has element type float64"):
        pp.torch.write_safetensors(tmp_path / "a.safetensors",
                                   {"w": np.zeros(2)})
    path = tmp_path / "f64.safetensors"
    save_file({"w": np.zeros(2)}, str(path))
    with pytest.raises(TypeError, match="tensor 'w' is F64"):
        pp.torch.read_safetensors(path)
