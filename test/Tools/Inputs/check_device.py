"""Checks a pp-calibrate device file: positive rates, GEMM classes in
ascending order with peak_flops their fastest, and with more than one
process measured links (else the cpu device's)."""
import json
import sys

path, processes = sys.argv[1], int(sys.argv[2])
with open(path) as f:
    device = json.load(f)
rates = device["gemm_flops"]
dims = [r["min_dim"] for r in rates]
assert dims == sorted(dims) and len(set(dims)) == len(dims), rates
assert all(r["flops"] > 0 for r in rates), rates
assert device["peak_flops"] == max(r["flops"] for r in rates), device
assert device["memory_bandwidth"] > 0 and device["memory_capacity"] > 0
meta = device["meta"]
assert meta["tool"] == "pp-calibrate" and meta["processes"] == processes, meta
if processes > 1:
    assert device["link_bandwidth"] > 0 and device["link_latency"] > 0, device
    assert len(meta["one_way"]) == len(meta["all_reduce"]) > 0, meta
    links = "links measured"
else:
    assert device["base"] == "cpu" and "link_bandwidth" not in device, device
    links = "links from cpu"
print("device ok: %s, %d GEMM classes, %s" % (device["name"], len(rates),
                                               links))
