"""A pure-Python (stdlib) safetensors reader and writer for the tests: an
independent check of what the runtime writes, and a maker of bad files."""
import json
import struct

SIZES = {"F64": 8, "F32": 4, "F16": 2, "BF16": 2, "I64": 8, "I32": 4}


def read(path):
    """Returns (metadata, {name: (dtype, shape, [floats] or bytes)}),
    checking the layout: header length, offsets contiguous and in order of
    the data, sizes matching the shapes."""
    with open(path, "rb") as f:
        blob = f.read()
    (n,) = struct.unpack("<Q", blob[:8])
    assert 8 + n <= len(blob), f"header length {n} beyond the file"
    header = json.loads(blob[8:8 + n].decode("utf-8"))
    data = blob[8 + n:]
    meta = header.pop("__metadata__", {})
    tensors, end = {}, 0
    for name, t in sorted(header.items(), key=lambda e: e[1]["data_offsets"]):
        begin, stop = t["data_offsets"]
        assert begin == end, f"{name}: gap or overlap at {begin}"
        count = 1
        for d in t["shape"]:
            count *= d
        assert stop - begin == count * SIZES[t["dtype"]], f"{name}: size"
        raw = data[begin:stop]
        values = (list(struct.unpack(f"<{count}f", raw))
                  if t["dtype"] == "F32" else raw)
        tensors[name] = (t["dtype"], t["shape"], values)
        end = stop
    assert end == len(data), "data beyond the last tensor"
    return meta, tensors


def write(path, tensors, metadata=None):
    """Writes {name: (dtype, shape, raw bytes)}."""
    header, blobs, offset = {}, [], 0
    if metadata is not None:
        header["__metadata__"] = metadata
    for name, (dtype, shape, raw) in tensors.items():
        header[name] = {"dtype": dtype, "shape": list(shape),
                        "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def f32(values):
    return struct.pack(f"<{len(values)}f", *values)
