#!/usr/bin/env bash
# The GPU check for a lent H200 (docs/GPU.md): trains the MLP and both GPT
# sizes built with pp-compile --target=cuda, on 1 rank (all 4 stages on the
# GPU) and on 4 ranks sharing it (host-staged transport), the MLP and the
# GPT (vocabulary split too) at 2 ranks x 2 tensor-parallel processes, and
# the MLP and the bench GPT built with --precision=bf16 on 1 rank, checks
# their losses against the fp32 CPU builds, and prints a benchmark table.
#
#   scripts/gpu-check.sh prepare [--build DIR] [--out DIR] [--steps N]
#       here (LLVM, pp-compile): builds every program, runs the CPU
#       references, copies the baseline tool; the device needs only OUT.
#   scripts/gpu-check.sh run [--out DIR]
#       on the GPU machine (no LLVM): the GPU runs, baselines and table.
#   scripts/gpu-check.sh all ...    both, on a machine that has everything.
#
# OUT defaults to build/gpu-check. Exit 0 when every run matched its CPU
# reference (fp32: 1e-4 relative; bf16: 2^-5, pprt.precision_bf16's bound),
# 1 otherwise, 2 on a usage or setup error.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

usage() {
  sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}
die() {
  echo "gpu-check: $*" >&2
  exit 2
}

mode=${1:-}
[ -n "$mode" ] || usage
shift
build=$root/build
out=
steps=3
while [ $# -gt 0 ]; do
  case $1 in
  --build) build=${2:?--build needs a directory}; shift 2 ;;
  --build=*) build=${1#*=}; shift ;;
  --out) out=${2:?--out needs a directory}; shift 2 ;;
  --out=*) out=${1#*=}; shift ;;
  --steps) steps=${2:?--steps needs a number}; shift 2 ;;
  --steps=*) steps=${1#*=}; shift ;;
  -h | --help) usage ;;
  *) die "unknown argument '$1' (see --help)" ;;
  esac
done
out=${out:-$build/gpu-check}
case $steps in '' | *[!0-9]* | 0) die "--steps must be a positive number, got '$steps'" ;; esac
case $mode in prepare | run | all) ;; *) die "unknown mode '$mode' (prepare, run or all)" ;; esac

# name model processes compile-flags: the programs of the check. 1 rank runs
# the looped schedule over 4 stages; 4 ranks run 1F1B, one stage each; -tp2
# runs 1F1B on 2 ranks of 2 tensor-parallel processes; a -bf16 program's
# CPU reference is its fp32 build.
configs() {
  local mlp=$root/examples/mlp/mlp.mlir gpt=$root/examples/gpt/gpt.mlir
  local bench=$root/examples/gpt/gpt-bench.mlir
  local one="--stages 4 --ranks 1 --microbatches 4 --schedule looped-bfs"
  local four="--stages 4 --microbatches 4 --schedule 1f1b"
  local tp="--stages 2 --microbatches 4 --schedule 1f1b --tensor-parallel 2"
  echo "mlp-1 $mlp 1 $one"
  echo "mlp-4 $mlp 4 $four"
  echo "gpt-1 $gpt 1 $one"
  echo "gpt-4 $gpt 4 $four"
  echo "gpt-bench-1 $bench 1 $one"
  echo "gpt-bench-4 $bench 4 $four"
  echo "mlp-tp2-4 $mlp 4 $tp"
  echo "gpt-tp2-4 $gpt 4 $tp --vocabulary-parallel"
  echo "mlp-1-bf16 $mlp 1 $one --precision=bf16"
  echo "gpt-bench-1-bf16 $bench 1 $one --precision=bf16"
}

# The training options of a model's runs (GPTs read the corpus).
run_flags() {
  case $1 in
  mlp-*) echo "--steps $steps --lr 0.1" ;;
  *) echo "--steps $steps --lr 0.1 --corpus $out/corpus.txt" ;;
  esac
}

launch() { # ranks program args... (stdin is the config list: keep it)
  local ranks=$1
  shift
  if [ "$ranks" = 1 ]; then
    "$@" </dev/null
  else
    "$mpiexec" -n "$ranks" "$@" </dev/null
  fi
}

find_mpiexec() {
  mpiexec=$(command -v mpiexec || command -v mpirun || true)
  [ -n "$mpiexec" ] || die "no mpiexec or mpirun on PATH (the 4-rank runs need the MPI libpprt was built with)"
}

prepare() {
  local compile=$build/bin/pp-compile bench=$build/runtime/pprt-cuda-bench
  [ -x "$compile" ] || die "no $compile: build pp first (scripts/build.sh)"
  grep -q '^PPRT_HAVE_CUDA:INTERNAL=ON' "$build/CMakeCache.txt" ||
    die "$build's libpprt has no CUDA backend (no CUDA toolkit when it was configured)"
  [ -x "$bench" ] || die "no $bench: ninja -C $build pprt-cuda-bench"
  find_mpiexec
  mkdir -p "$out"
  cp "$bench" "$root/examples/gpt/corpus.txt" "$out/"
  printf '%s\n' "$steps" >"$out/steps"
  configs >"$out/configs"
  local name model ranks flags
  while read -r name model ranks flags; do
    echo "gpu-check: building $name (cpu and cuda)"
    # shellcheck disable=SC2086
    "$compile" "$model" ${flags/--precision=bf16/} -o "$out/$name.cpu" </dev/null
    # shellcheck disable=SC2086
    "$compile" "$model" $flags --target=cuda -o "$out/$name.cuda" </dev/null
    echo "gpu-check: CPU reference of $name"
    # shellcheck disable=SC2046
    launch "$ranks" "$out/$name.cpu" $(run_flags "$name") --backend cpu \
      >"$out/$name.cpu.log"
  done <"$out/configs"
  echo "gpu-check: prepared $out ($(du -sh "$out" | cut -f1)); on the GPU machine: scripts/gpu-check.sh run --out $out"
}

# Adds directories holding the CUDA libraries the programs need (cuBLAS,
# cudart, NCCL, MPI; OUT/lib for carried ones) to LD_LIBRARY_PATH when the
# loader cannot find them.
find_libraries() {
  local exe=$1 missing dir
  missing=$( (ldd "$exe" 2>/dev/null || true) | awk '/not found/ {print $1}')
  [ -z "$missing" ] && return
  for dir in "$out/lib" /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib \
    /usr/local/cuda-*/lib64 /usr/lib/x86_64-linux-gnu \
    /usr/local/lib/python3*/dist-packages/nvidia/*/lib \
    /usr/lib/python3/dist-packages/nvidia/*/lib; do
    [ -d "$dir" ] && LD_LIBRARY_PATH=$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  done
  export LD_LIBRARY_PATH
  missing=$( (ldd "$exe" 2>/dev/null || true) | awk '/not found/ {print $1}')
  [ -z "$missing" ] || die "libraries not found on this machine: $(echo $missing) (install or carry them and set LD_LIBRARY_PATH)"
}

run() {
  [ -f "$out/configs" ] || die "no $out/configs: run 'scripts/gpu-check.sh prepare' first"
  steps=$(cat "$out/steps")
  command -v nvidia-smi >/dev/null && nvidia-smi -L 2>/dev/null | grep -q GPU ||
    die "no GPU here (nvidia-smi -L lists none)"
  command -v python3 >/dev/null || die "python3 is needed for the report"
  find_mpiexec
  find_libraries "$out/gpt-bench-4.cuda"
  local start=$SECONDS name model ranks flags
  echo "gpu-check: baselines"
  "$out/pprt-cuda-bench" bandwidth 268435456 >"$out/bandwidth.txt"
  while read -r name model ranks flags; do
    echo "gpu-check: $name on the GPU"
    rm -f "$out/$name.gemm".* "$out/$name.metrics" "$out/$name.profile.json" \
      "$out/$name.gemm-baseline.txt"
    # shellcheck disable=SC2046
    PPRT_CUDA_GEMM_STATS=$out/$name.gemm launch "$ranks" "$out/$name.cuda" \
      $(run_flags "$name") --metrics "$out/$name.metrics" \
      >"$out/$name.cuda.log" 2>"$out/$name.cuda.err" || true
    # shellcheck disable=SC2046
    launch "$ranks" "$out/$name.cuda" $(run_flags "$name") --warmup 1 \
      --profile "$out/$name.profile.json" >/dev/null 2>>"$out/$name.cuda.err" || true
    if compgen -G "$out/$name.gemm.*" >/dev/null; then
      "$out/pprt-cuda-bench" gemm "$out/$name.gemm".* >"$out/$name.gemm-baseline.txt" </dev/null
    fi
  done <"$out/configs"
  echo "gpu-check: runs took $((SECONDS - start)) s"
  python3 - "$out" <<'EOF'
import glob, json, os, re, sys

out = sys.argv[1]
STEP = re.compile(r"step (\d+) loss (\S+)$")


def losses(path):
    try:
        with open(path) as f:
            return [float(m[2]) for m in map(STEP.match, f) if m]
    except OSError:
        return []


def close(a, b, rel):
    return abs(a - b) <= rel * max(abs(a), abs(b)) + 1e-7


# fp32 against fp32: summation order only. bf16 against fp32: bf16 keeps 8
# significant bits (u = 2^-8); 8u bounds the first steps' loss difference
# (runtime/test/pprt_tests.py, BF16_LOSS_RTOL).
def tolerance(name):
    return 2.0 ** -5 if name.endswith("-bf16") else 1e-4


bandwidth = {}
with open(os.path.join(out, "bandwidth.txt")) as f:
    for line in f:
        _, what, gbs = line.split()
        bandwidth[what] = float(gbs)

rows, ok = [], True
for line in open(os.path.join(out, "configs")):
    name, _model, ranks, *_flags = line.split()
    cpu = losses(os.path.join(out, f"{name}.cpu.log"))
    gpu = losses(os.path.join(out, f"{name}.cuda.log"))
    rel = tolerance(name)
    match = bool(cpu) and len(cpu) == len(gpu) and \
        all(close(a, b, rel) for a, b in zip(cpu, gpu))
    if not match:
        ok = False
        try:
            err = open(os.path.join(out, f"{name}.cuda.err")).read().strip()
        except OSError:
            err = ""
        print(f"FAIL {name}: losses {gpu} on the GPU, {cpu} on the CPU"
              + (f"\n  {err.splitlines()[-1]}" if err else ""))
    worst = max((abs(a - b) / max(abs(a), abs(b), 1e-30)
                 for a, b in zip(cpu, gpu)), default=float("nan"))
    step_s = float("nan")
    try:
        times = [json.loads(l)["seconds"] for l in
                 open(os.path.join(out, f"{name}.metrics"))]
        step_s = sorted(times[1:] or times)[len(times[1:] or times) // 2]
    except (OSError, ValueError, KeyError):
        pass
    run_s = base_s = gflop = 0.0
    for l in open(os.path.join(out, f"{name}.gemm-baseline.txt")) \
            if os.path.exists(os.path.join(out, f"{name}.gemm-baseline.txt")) else []:
        f = l.split()
        run_s += float(f[10]); base_s += float(f[11]); gflop += float(f[12])
    overhead_us = float("nan")
    try:
        profile = json.load(open(os.path.join(out, f"{name}.profile.json")))
        meta = profile["meta"]
        stages = len(profile["stages"]) // int(ranks)
        actions = stages * int(meta["microbatches"]) * 2
        overhead_us = 1e3 * (meta["step_time"] - meta["step_action_time"]) / actions
    except (OSError, ValueError, KeyError, ZeroDivisionError):
        pass
    rows.append((name, match, worst, step_s * 1e3,
                 gflop / run_s / 1e3 if run_s else float("nan"),
                 gflop / base_s / 1e3 if base_s else float("nan"),
                 base_s / run_s if run_s else float("nan"), overhead_us))

print()
print(f"{'run':<17}{'losses':>8}{'max rel':>10}{'step ms':>10}"
      f"{'GEMM TF/s':>11}{'cuBLAS TF/s':>13}{'GEMM/base':>11}{'us/action':>11}")
for name, match, worst, step, tf, base, ratio, over in rows:
    print(f"{name:<17}{'ok' if match else 'FAIL':>8}{worst:>10.2e}{step:>10.3f}"
          f"{tf:>11.3f}{base:>13.3f}{ratio:>10.0%} {over:>10.1f}")
copy, acc = bandwidth.get("copy", 0.0), bandwidth.get("accumulate", 0.0)
print(f"\nelementwise (pprt accumulate kernel) {acc:.0f} GB/s vs "
      f"device-to-device copy {copy:.0f} GB/s: {acc / copy if copy else 0:.0%}")
print("GEMM TF/s: the run's pprt_gemm calls (cuBLAS, timed synchronously) "
      "against bare cuBLAS on the same shapes and counts, measured here.\n"
      "us/action: --profile's step time minus its actions, per action of "
      "rank 0 (on 4 ranks this includes waiting for peers: the bubble).")
sys.exit(0 if ok else 1)
EOF
}

case $mode in
prepare) prepare ;;
run) run ;;
all) prepare && run ;;
esac
