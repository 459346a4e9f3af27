#!/usr/bin/env python3
"""Trained weights of a compiled model survive a save and a load: the MLP
on 2 ranks saves its weights after 3 steps (--save), and 2 more steps from
that file (--init-weights, --first-step 4: the data of steps 4 and 5) give
the losses of steps 4 and 5 of a 5-step run, bit for bit. The file is read
back with a stdlib-only reader (names, dtypes, shapes, values against
--print-params), and the unpipelined 1-stage program resumes from the same
file to the same losses: names stand for model arguments, not stages."""

import argparse
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..",
                                "runtime", "test"))
import safetensors_file  # noqa: E402

# The MLP's weights: train_step arguments 2..9 (examples/mlp/mlp.mlir).
MLP_PARAMS = {
    "param2": [16, 32], "param3": [32], "param4": [32, 32], "param5": [32],
    "param6": [32, 32], "param7": [32], "param8": [32, 4], "param9": [4],
}


def run(cmd):
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        sys.exit(f"FAILED ({proc.returncode}): {' '.join(cmd)}\n"
                 f"{proc.stdout}\n{proc.stderr}")
    return proc.stdout


def compile_mlp(args, workdir, stages):
    exe = os.path.join(workdir, f"mlp_{stages}")
    run([args.pp_compile, args.model, "--stages", str(stages), "--ranks",
         str(stages), "--microbatches", "4" if stages > 1 else "1",
         "--schedule", "1f1b" if stages > 1 else "gpipe", "-o", exe])
    return exe


def train(exe, ranks, *flags):
    """{step: loss text} and {param index: (sum, sumsq)} of a run."""
    out = run(["mpirun", "-np", str(ranks), exe, "--lr", "0.1", "--timeout",
               "60", *flags])
    losses = {int(s): v for s, v in
              re.findall(r"^step (\d+) loss (\S+)$", out, re.M)}
    params = {int(i): (float(s), float(q)) for i, s, q in
              re.findall(r"^param (\d+) sum (\S+) sumsq (\S+)$", out, re.M)}
    return losses, params


def close(a, b, rtol):
    return abs(a - b) <= rtol * max(abs(a), abs(b), 1e-12)


def check_file(path, params):
    """The errors in the saved file: layout, names, shapes, values."""
    errors = []
    meta, tensors = safetensors_file.read(path)
    if meta.get("step") != "3":
        errors.append(f"metadata {meta}")
    shapes = {name: shape for name, (dtype, shape, _) in tensors.items()
              if dtype == "F32"}
    if shapes != MLP_PARAMS:
        errors.append(f"tensors {shapes}, expected {MLP_PARAMS}")
    for name, (_, _, values) in tensors.items():
        total, sumsq = params[int(name[len("param"):])]
        if not (close(sum(values), total, 1e-6) and
                close(sum(v * v for v in values), sumsq, 1e-6)):
            errors.append(f"{name}: values do not match --print-params")
    return errors


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--pp-compile", required=True)
    parser.add_argument("--model", required=True)
    args = parser.parse_args()
    errors = []
    with tempfile.TemporaryDirectory() as workdir:
        pipe, ref = compile_mlp(args, workdir, 2), compile_mlp(args, workdir, 1)
        path = os.path.join(workdir, "mlp.safetensors")
        whole, _ = train(pipe, 2, "--steps", "5")
        _, params = train(pipe, 2, "--steps", "3", "--save", path,
                          "--print-params")
        errors += check_file(path, params)
        resume = ["--steps", "2", "--init-weights", path, "--first-step", "4"]
        rest, _ = train(pipe, 2, *resume)
        for step in (4, 5):
            if rest.get(step) != whole[step]:
                errors.append(f"step {step}: resumed loss {rest.get(step)} "
                              f"!= {whole[step]} of the 5-step run")
        # The 1-stage program names the same weights the same way.
        ref_rest, _ = train(ref, 1, *resume)
        for step in (4, 5):
            if not close(float(ref_rest[step]), float(whole[step]), 1e-5):
                errors.append(f"step {step}: 1-stage resumed loss "
                              f"{ref_rest[step]} != {whole[step]}")
        print("5-step run:", whole)
        print("resumed (2 stages):", rest, "resumed (1 stage):", ref_rest)
    for e in errors:
        print("FAIL:", e)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
