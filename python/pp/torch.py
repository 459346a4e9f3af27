"""PyTorch models into pp (docs/PyTorch.md): `export` runs torch-mlir's FX
importer on a training step whose weights are explicit arguments, marks
those arguments `pp.param` and the loss's targets `pp.target`, and writes
the module's weights next to the MLIR as the runtime's `--init-weights`
file. Everything the model then needs rewritten is a pp pass (`pp-compile`
runs them); this module only drives torch-mlir, names the arguments,
marks the cut points (`pp.boundary`) and rejects ops of dialects pp does
not compile at the model's line.

    exported = pp.torch.export(model, (x, t), F.mse_loss, "mlp.mlir",
                               microbatches=4)
    program = pp.compile(exported.mlir, stages=2, microbatches=4)
    pp.run(program, steps=3, init_weights=exported.weights)

torch and torch_mlir are imported when `export` runs, not with pp."""

from __future__ import annotations

import dataclasses
import json
import os
import pathlib
import re
import warnings
from typing import (Callable, Dict, List, Mapping, Optional, Sequence, Tuple,
                    Union)

__all__ = ["Exported", "export", "pipe_split", "read_safetensors",
           "write_safetensors"]

PathLike = Union[str, "os.PathLike[str]"]

# The numpy element types the runtime reads, with their safetensors names
# (bfloat16 has no numpy type, so weights of it cannot pass through here).
_DTYPES = {"float32": "F32", "float16": "F16", "int32": "I32",
           "int64": "I64", "bool": "BOOL"}


@dataclasses.dataclass(frozen=True)
class Exported:
    """What `export` wrote: the training step (`mlir`, a `train_step`
    taking the inputs, then the targets, then the weights) and its initial
    weights (`weights`, safetensors). `names` maps each weight's runtime
    name (`param<argument>`) to its `state_dict` key; `inputs` and
    `targets` are the argument positions of the data; `microbatches` is the
    count the step was traced for (None: at the whole batch's shape).
    `states` are the `state_dict` keys of the batch norms' running
    statistics the step updates (`pp.state` arguments after the weights,
    named `state<argument>` in `names` and in the files). `packed_inputs`
    maps "document_ids" and "position_ids" to the inputs the runtime fills
    with them (`export(..., packed_inputs=...)`)."""

    mlir: pathlib.Path
    weights: pathlib.Path
    names: Dict[str, str]
    inputs: Tuple[int, ...]
    targets: Tuple[int, ...]
    microbatches: Optional[int] = None
    # Buffers the module's forward updates in place (batch norm's running
    # statistics): the step computes with copies, so they keep their values.
    frozen_buffers: Tuple[str, ...] = ()
    states: Tuple[str, ...] = ()
    # The `pp.split` a parallelize_plan set, by state_dict key.
    splits: Mapping[str, str] = dataclasses.field(default_factory=dict)
    # Parameters with requires_grad=False: constants of the step, by
    # state_dict key, with their values at export.
    frozen_params: Mapping[str, object] = dataclasses.field(
        default_factory=dict)
    packed_inputs: Mapping[str, int] = dataclasses.field(default_factory=dict)

    def state_dict(self, path: PathLike):
        """The weights in a file pp wrote (`--save`, or `weights`) under the
        module's `state_dict` keys, as torch tensors for `load_state_dict`.
        A weight several stages hold (`param<i>.stage<s>`, the copies being
        equal after each update) is taken from its first stage. Parameters
        that do not require grad are the step's constants, and parameters
        the loss does not depend on get no gradient (PyTorch's optimizers
        skip them) and are in no stage: both come back with the values
        they had at export."""
        import torch
        weights = {name: value.detach().clone()
                   for name, value in self.frozen_params.items()}
        for source in (path, self.weights):
            for key, value in sorted(read_safetensors(source).items()):
                name = self.names.get(key.split(".stage")[0])
                if name is not None and name not in weights:
                    weights[name] = torch.from_numpy(value.copy())
        return weights


def write_safetensors(path: PathLike, tensors: Mapping[str, object],
                      metadata: Mapping[str, str] = ()) -> None:
    """Writes `tensors` (name to torch tensor or numpy array) as a
    safetensors file with the `safetensors` package, `metadata` in its
    header's `__metadata__`."""
    import numpy as np
    from safetensors.numpy import save_file
    arrays = {}
    for name, tensor in tensors.items():
        array = tensor.detach().cpu().numpy() if hasattr(
            tensor, "detach") else np.asarray(tensor)
        if array.dtype.name not in _DTYPES:
            raise TypeError(f"weight '{name}' has element type "
                            f"{array.dtype.name}, which pp does not store")
        arrays[name] = np.asarray(array, order="C")  # keeps rank 0
    save_file(arrays, os.fspath(path), metadata=dict(metadata) or None)


def read_safetensors(path: PathLike) -> Dict[str, object]:
    """The tensors of a safetensors file as numpy arrays, by name, read
    with the `safetensors` package."""
    from safetensors import safe_open
    tensors = {}
    with safe_open(os.fspath(path), framework="np") as f:
        for name in f.keys():
            dtype = f.get_slice(name).get_dtype()
            if dtype not in _DTYPES.values():
                raise TypeError(f"{path}: tensor '{name}' is {dtype}, "
                                f"which this reader does not convert")
            tensors[name] = f.get_tensor(name)
    return tensors


# The values marked as stage boundaries while `export` traces, or None
# outside an export.
_boundaries: Optional[List[object]] = None


def pipe_split(value):
    """Marks `value` as the end of a pipeline stage: the stage after it
    starts with the ops that read it (`pp.boundary`). Returns `value`, so
    a model calls it in its forward (`x = pipe_split(x)`); outside
    `export` it does nothing."""
    if _boundaries is not None and all(v is not value for v in _boundaries):
        _boundaries.append(value)
    return value


def _mark_split_points(module, split_points: Sequence[str]):
    """Hooks that mark the input of each named submodule as a stage
    boundary, as PyTorch's `split_spec` with `SplitPoint.BEGINNING` does
    (its first input: the others, such as a mask, pass as they are).
    Returns the hook handles."""
    modules = dict(module.named_modules())
    handles = []
    for name in split_points:
        if name not in modules or name == "":
            raise ValueError(f"split point '{name}' names no submodule of "
                             f"{type(module).__name__}")
        handles.append(modules[name].register_forward_pre_hook(
            lambda _, args: (pipe_split(args[0]),) + tuple(args[1:])))
    return handles


def _updated_buffers(module, inputs) -> Tuple[str, ...]:
    """The buffers that `module`'s forward on `inputs` updates in place:
    those of batch norms in training mode (whose kernel updates them
    without a trace on the tensor) and any other that a run of a copy of
    the module changes."""
    import copy
    import torch
    trial = copy.deepcopy(module)
    before = {name: (b._version, b.clone())
              for name, b in trial.named_buffers()}
    with torch.no_grad():
        trial(*(x.clone() if isinstance(x, torch.Tensor) else x
                for x in inputs))
    norms = {f"{prefix}.{name}" if prefix else name
             for prefix, norm in module.named_modules()
             if isinstance(norm, torch.nn.modules.batchnorm._NormBase)
             and norm.training and norm.track_running_stats
             for name, _ in norm.named_buffers(recurse=False)}
    return tuple(name for name, b in trial.named_buffers()
                 if name in norms or b._version != before[name][0]
                 or not torch.equal(b, before[name][1]))


_STATISTICS = ("running_mean", "running_var", "num_batches_tracked")


def _tracked_norms(module, updated: Sequence[str]) -> Dict[str, object]:
    """The batch norms in training mode whose running statistics the
    forward updates, by module name."""
    import torch
    return {prefix: norm for prefix, norm in module.named_modules()
            if isinstance(norm, torch.nn.modules.batchnorm._BatchNorm)
            and norm.training and norm.track_running_stats
            and _key(prefix, "num_batches_tracked") in updated}


def _key(prefix: str, name: str) -> str:
    return f"{prefix}.{name}" if prefix else name


def _update_statistics(norm, x, state: Dict[str, object], prefix: str):
    """Replaces `norm`'s running statistics in `state` by PyTorch's update
    from the batch `x` (before the norm): the momentum average of the
    batch mean and unbiased variance (a cumulative average with momentum
    None), and one more batch counted."""
    dims = [0] + list(range(2, x.dim()))
    mean = x.mean(dims)
    var = x.var(dims, unbiased=True)  # training needs count > 1
    keys = [_key(prefix, name) for name in _STATISTICS]
    batches = state[keys[2]] + 1
    factor = (1.0 / batches.to(x.dtype) if norm.momentum is None
              else norm.momentum)
    state[keys[0]] = factor * mean + (1 - factor) * state[keys[0]]
    state[keys[1]] = factor * var + (1 - factor) * state[keys[1]]
    state[keys[2]] = batches


def _read_padding_row(embedding, ids, output, row):
    """nn.Embedding's output with the positions of its `padding_idx` read
    as `row`, the padding row's value at export: PyTorch gives that row no
    gradient, so it keeps its value, and pp, which differentiates the
    forward as written, then gives it none either."""
    import torch
    padding = (ids == embedding.padding_idx).unsqueeze(-1)
    return torch.where(padding, row.to(output.dtype), output)


def _training_step(module, loss_fn: Callable, names: Sequence[str],
                   num_inputs: int, scale: float,
                   updated: Sequence[str] = (), states: Sequence[str] = (),
                   frozen_params: Mapping[str, object] = {}):
    """An nn.Module whose forward takes (inputs, targets, weights, states)
    and returns the loss times `scale`, the new `states`, then the values
    `pipe_split` marked: the weights become explicit arguments through
    torch.func.functional_call, so torch-mlir imports them as arguments
    rather than as constants. The `updated` buffers are copied first, so
    that their in-place update (which torch.export rejects on a constant)
    stays inside the step, where nothing reads it; batch norms in training
    mode run without their running statistics, whose new values (those in
    `states`) are computed apart, before each norm runs, from their
    arguments. `frozen_params` (no grad) are constants of the step."""
    import torch
    buffers = dict(module.named_buffers())
    norms = _tracked_norms(module, updated)
    statistics = {_key(prefix, name) for prefix in norms
                  for name in _STATISTICS}
    norms = {prefix: norm for prefix, norm in norms.items()
             if _key(prefix, _STATISTICS[0]) in states}
    padding_rows = [(embedding, embedding.weight[embedding.padding_idx]
                     .detach().clone())
                    for embedding in module.modules()
                    if isinstance(embedding, torch.nn.Embedding)
                    and embedding.padding_idx is not None]

    class TrainingStep(torch.nn.Module):
        def forward(self, *args):
            global _boundaries
            first = len(args) - len(names) - len(states)
            inputs = args[:num_inputs]
            targets = args[num_inputs:first]
            weights = dict(zip(names, args[first:first + len(names)]))
            state = dict(zip(states, args[first + len(names):]))
            weights.update({name: buffers[name].clone() for name in updated
                            if name not in statistics})
            weights.update(frozen_params)   # detached at export
            # Without running statistics a training-mode norm normalizes
            # with the batch's and updates nothing (nor reads its count as
            # a float, which momentum None would).
            weights.update({name: None for name in statistics})
            hooks = [norm.register_forward_pre_hook(
                lambda norm, a, prefix=prefix: _update_statistics(
                    norm, a[0], state, prefix))
                for prefix, norm in norms.items()]
            hooks += [embedding.register_forward_hook(
                lambda embedding, a, out, row=row: _read_padding_row(
                    embedding, a[0], out, row))
                for embedding, row in padding_rows]
            _boundaries = []
            try:
                output = torch.func.functional_call(module, weights, inputs)
                marked = tuple(_boundaries)
            finally:
                _boundaries = None
                for hook in hooks:
                    hook.remove()
            loss = loss_fn(output, *targets)
            if scale != 1:
                loss = loss * scale
            results = (loss,) + tuple(state[name] for name in states) + marked
            return results if len(results) > 1 else loss

    return TrainingStep()


def _topk(x, k, dim=-1, largest=True, sorted=True):
    """torch.topk as k max (or min) reductions, each masking the element it
    picked: ops whose gradients pp derives (the selected values get the
    result's gradient), where torch-mlir would emit `tm_tensor.sort`. The
    cost is k passes over `dim`: meant for routing (k and `dim` small)."""
    import torch
    dim = dim % x.dim()
    shape = [1] * x.dim()
    shape[dim] = x.shape[dim]
    positions = torch.arange(x.shape[dim], device=x.device).view(shape)
    fill = float("-inf") if largest else float("inf")
    rest, values, indices = x, [], []
    for _ in range(k):
        value, index = (rest.max if largest else rest.min)(dim, keepdim=True)
        values.append(value)
        indices.append(index)
        rest = torch.where(positions == index, fill, rest)
    return torch.cat(values, dim), torch.cat(indices, dim)


def _sort(x, dim=-1, descending=False, stable=None):
    """torch.sort (and argsort) as a top-k over the whole dimension."""
    return _topk(x, x.shape[dim], dim, largest=descending)


def _model_frames(trace: str) -> List[Tuple[str, str]]:
    """The (file, line) frames of an FX node's stack trace, outermost
    first, without this module's own."""
    return [f for f in re.findall(r'File "([^"]+)", line (\d+)', trace or "")
            if f[0] != __file__]


def _unsupported(message: str, trace: Optional[str] = None) -> ValueError:
    """A ValueError for an op pp cannot train as PyTorch does, located at
    the model line of `trace` (by default the stack trace of the node being
    decomposed: the innermost frame outside this module and torch's)."""
    if trace is None:
        import torch.fx.traceback
        trace = torch.fx.traceback.get_current_meta().get("stack_trace")
    frames = _model_frames(trace)
    # The model's line: the innermost frame outside torch's own modules.
    import torch
    library = os.path.dirname(torch.__file__) + os.sep
    frames = [f for f in frames if not f[0].startswith(library)] or frames
    where = f"{frames[-1][0]}:{frames[-1][1]}: " if frames else ""
    return ValueError(where + message)


_NO_STOP_GRADIENT = (
    "pp differentiates the forward as it computes and cannot stop a "
    "gradient, so it refuses the step rather than train it to another "
    "gradient than PyTorch's")


def _check_gradient_stops(program) -> None:
    """`torch.no_grad()` blocks in the model (torch.export's
    wrap_with_set_grad_enabled(False, ...)) are a ValueError at their line:
    torch-mlir imports what they compute as any other op."""
    import torch
    for node in program.graph.nodes:
        if (node.target is torch.ops.higher_order.wrap_with_set_grad_enabled
                and node.args and node.args[0] is False):
            body = getattr(program.graph_module, node.args[1].target)
            traces = [n.meta.get("stack_trace") for n in body.graph.nodes]
            raise _unsupported(
                "a torch.no_grad() block: " + _NO_STOP_GRADIENT,
                next((t for t in traces if _model_frames(t)), None))


_DATA_DEPENDENT = (
    "pp compiles static shapes and keeps every value a tensor of the step")


def _check_static(program) -> None:
    """Shapes or Python numbers that depend on the data (`y[y > 0]`,
    `.item()`, `nonzero`) are a ValueError at their model line: the step
    traced would hold the example's values, or never finish lowering."""
    from torch.fx.experimental.symbolic_shapes import free_unbacked_symbols
    for node in program.graph.nodes:
        value = node.meta.get("val")
        if node.op != "call_function" or value is None or \
                not free_unbacked_symbols(value):
            continue
        op = str(node.target).removesuffix(".default")
        what = ("a Python number taken from a tensor (.item())"
                if op in ("aten.item", "aten._local_scalar_dense") else
                f"{op} makes a shape that depends on the data (a boolean "
                "mask's selection, nonzero, unique); use torch.where or a "
                "masked sum instead")
        raise _unsupported(f"{what}: {_DATA_DEPENDENT}",
                           node.meta.get("stack_trace"))


def _copy_before(program, node, value):
    """A copy of `value` (aten.clone) placed before `node`, at its line."""
    import torch
    with program.graph.inserting_before(node):
        copy = program.graph.call_function(torch.ops.aten.clone.default,
                                           (value,))
    copy.meta.update(val=value.meta["val"],
                     stack_trace=node.meta.get("stack_trace"))
    return copy


def _copy_listed_constants(program) -> None:
    """torch-mlir imports a buffer or constant as a literal, which it does
    not take inside a list (the indices of `z[:, rows, cols]` with `rows` a
    buffer): such a use reads a copy instead."""
    inputs = set(program.graph_signature.user_inputs)

    def constant(arg):
        return getattr(arg, "op", None) == "placeholder" and \
            arg.name not in inputs

    for node in list(program.graph.nodes):
        if node.op != "call_function":
            continue
        node.args = tuple(
            type(arg)(_copy_before(program, node, a) if constant(a) else a
                      for a in arg)
            if isinstance(arg, (list, tuple)) and any(map(constant, arg))
            else arg
            for arg in node.args)
    program.graph_module.recompile()


def _check_loss(program, loss_fn) -> None:
    """The step's first output is the loss: one number."""
    output = next(iter(reversed(program.graph.nodes)))
    value = output.args[0][0].meta.get("val")
    shape = tuple(getattr(value, "shape", ()))
    if shape != ():
        raise ValueError(
            f"loss_fn {getattr(loss_fn, '__name__', loss_fn)!r} returns a "
            f"tensor of shape {shape}, not a scalar: pp trains on one loss "
            "per step (reduce it, e.g. with .mean() or reduction='mean')")


def _scatter(x, dim, index, src, add=False):
    """x.scatter(dim, index, src) (scatter_add with `add`) as comparisons of
    `index` with the positions along `dim` and sums: ops whose gradients pp
    derives, where torch-mlir's own scatter can crash its lowering. `index`
    spans `x` in every other dimension (static shapes)."""
    import torch
    dim = dim % x.dim()
    for d in range(x.dim()):
        if d != dim and index.shape[d] != x.shape[d]:
            raise _unsupported(
                f"scatter along dimension {dim} with an index of shape "
                f"{tuple(index.shape)} into {tuple(x.shape)}: pp supports "
                "an index as large as the input in every other dimension")
    if not isinstance(src, torch.Tensor):
        src = torch.full(index.shape, src, dtype=x.dtype, device=x.device)
    src = src[tuple(slice(0, n) for n in index.shape)]
    positions = torch.arange(x.shape[dim], device=x.device)
    # [..., k at dim, ..., n]: where each index entry writes.
    hit = index.unsqueeze(-1) == positions
    written = (hit.to(x.dtype) * src.unsqueeze(-1)).sum(dim).movedim(-1, dim)
    if add:
        return x + written
    touched = hit.any(dim).movedim(-1, dim)
    return torch.where(touched, written, x)


def _index_put(x, indices, values, accumulate=False):
    """x.index_put(indices, values) (`x[i] = v`, `x[:, i] += v`) as
    comparisons and sums, where torch-mlir does not import the list of
    indices with its empty (sliced) entries: either a boolean mask over
    the leading dimensions and a value that needs no count of the masked
    elements, or integer indices at adjacent dimensions. Where an index
    names a position twice, the values written there are summed."""
    import torch
    dims = [d for d, index in enumerate(indices) if index is not None]
    if len(dims) == 1 and indices[dims[0]].dtype == torch.bool:
        mask = indices[dims[0]]
        if dims[0] != 0 or values.dim() > x.dim() - mask.dim():
            raise _unsupported(
                "index_put with a boolean mask: pp supports a mask over "
                "the leading dimensions and a value broadcast to every "
                "masked element (`x[mask] = 0`), not one value per masked "
                "element, whose count the data decides")
        mask = mask.reshape(mask.shape + (1,) * (x.dim() - mask.dim()))
        if accumulate:
            return x + torch.where(mask, values, 0)
        return torch.where(mask, values.to(x.dtype), x)
    if not dims or dims != list(range(dims[0], dims[-1] + 1)) or any(
            indices[d].dtype == torch.bool for d in dims):
        raise _unsupported(
            "index_put: pp supports integer indices at adjacent dimensions "
            "(`x[i] = v`, `x[:, i, j] = v`) or one boolean mask over the "
            f"leading dimensions; got indices at dimensions {dims}")
    first, last = dims[0], dims[-1] + 1
    index = torch.zeros((), dtype=torch.int64, device=x.device)
    for d in dims:   # the position in the merged dimensions, row-major
        i = indices[d]
        index = index * x.shape[d] + torch.where(i < 0, i + x.shape[d], i)
    merged = x.reshape(x.shape[:first] + (-1,) + x.shape[last:])
    # values: x.shape[:first] + index.shape + x.shape[last:], broadcast.
    values = values.to(x.dtype).expand(
        x.shape[:first] + index.shape + x.shape[last:])
    values = values.reshape(x.shape[:first] + (-1,) + x.shape[last:])
    positions = torch.arange(merged.shape[first], device=x.device)
    hit = (index.reshape(-1, 1) == positions).to(x.dtype)  # [k, position]
    # written[p, n, r] = sum over k of values[p, k, r] * hit[k, n]
    written = (values.movedim(first, -1).unsqueeze(-1) * hit).sum(-2)
    written = written.movedim(-1, first)
    if accumulate:
        return (merged + written).reshape(x.shape)
    touched = (hit.sum(0) > 0).reshape((-1,) + (1,) * (x.dim() - last))
    return torch.where(touched, written, merged).reshape(x.shape)


def _index_add(x, dim, index, source, alpha=1):
    """x.index_add(dim, index, source) as an accumulating _index_put."""
    dim = dim % max(x.dim(), 1)
    return _index_put(x, [None] * dim + [index], source * alpha,
                      accumulate=True)


def _group_norm(x, weight, bias, batch, channels, inner, groups, eps):
    """aten.native_group_norm with reshapes where PyTorch's own
    decomposition takes the per-channel scale and shift of each row with
    `as_strided`, which torch-mlir imports as a gather at constant indices
    that name the rows of the batch (pp-split-microbatches cannot split
    those): the same statistics, each row read only by its own outputs."""
    import torch
    grouped = x.reshape(batch, groups, channels // groups, inner)
    var, mean = torch.var_mean(grouped, dim=[2, 3], unbiased=False,
                               keepdim=True)
    rstd = torch.rsqrt(var + eps)
    out = ((grouped - mean) * rstd).reshape(x.shape)
    per_channel = [1, channels] + [1] * (x.dim() - 2)
    if weight is not None:
        out = out * weight.reshape(per_channel)
    if bias is not None:
        out = out + bias.reshape(per_channel)
    return out, mean.reshape(batch, groups), rstd.reshape(batch, groups)


def _gelu(x, approximate="none"):
    """F.gelu with `approximate="tanh"` as PyTorch writes it, where
    torch-mlir's lowering takes sqrt(2 / pi) as 0.797724 (PyTorch's loss
    then differs from the third significant digit of the activation on);
    the exact GELU is left to torch-mlir."""
    import math
    import torch
    if approximate != "tanh":
        return NotImplemented
    inner = math.sqrt(2 / math.pi) * (x + 0.044715 * x * x * x)
    return 0.5 * x * (1 + torch.tanh(inner))


def _detach(x):
    """x.detach() as the value itself where it cannot matter (integers, or
    outside the model); in the model, a floating-point detach is a
    ValueError at its line: the detached value would get a gradient
    PyTorch does not give it. (The step's running statistics, which no
    gradient reaches, are computed without detach for this reason.)"""
    import torch.fx.traceback
    trace = torch.fx.traceback.get_current_meta().get("stack_trace")
    if not x.is_floating_point() or not _model_frames(trace):
        return x.clone()
    raise _unsupported("Tensor.detach() (a stop-gradient, as in a "
                       "straight-through estimator): " + _NO_STOP_GRADIENT,
                       trace)


def _roll(x, shifts, dims=()):
    """torch.roll as slices and a concatenation per dimension (static
    shapes, where torch-mlir's lowering leaves a dynamic one)."""
    import torch
    if not dims:
        return _roll(x.flatten(), shifts, (0,)).view(x.shape)
    for shift, dim in zip(shifts, dims):
        size = x.shape[dim]
        shift %= size
        if shift:
            x = torch.cat([x.narrow(dim, size - shift, shift),
                           x.narrow(dim, 0, size - shift)], dim)
    return x


def _embedding_bag(weight, indices, offsets, scale_grad_by_freq=False,
                   mode=0, sparse=False, per_sample_weights=None,
                   include_last_offset=False, padding_idx=None):
    """nn.EmbeddingBag's sum or mean as a product of the bags' membership
    (a [bags, indices] 0/1 matrix from the offsets) with the looked-up
    rows; its max is refused at the model's line."""
    import torch
    if mode == 2:
        raise _unsupported("nn.EmbeddingBag(mode='max') is not supported: "
                           "use mode='sum' or 'mean'")
    count = indices.shape[0]
    bags = offsets.shape[0] - (1 if include_last_offset else 0)
    ends = offsets[1:] if include_last_offset else torch.cat(
        [offsets[1:], offsets.new_full((1,), count)])
    position = torch.arange(count, device=indices.device)
    member = (position[None] >= offsets[:bags, None]) & \
        (position[None] < ends[:, None])
    if padding_idx is not None and padding_idx >= 0:
        member = member & (indices != padding_idx)[None]
    rows = torch.nn.functional.embedding(indices, weight)
    if per_sample_weights is not None:
        rows = rows * per_sample_weights[:, None]
    output = member.to(weight.dtype) @ rows
    sizes = member.sum(1)
    if mode == 1:
        output = output / sizes.clamp(min=1)[:, None].to(weight.dtype)
    zeros = indices.new_zeros
    return output, zeros(count), sizes, zeros(bags)


def _decompositions():
    """torch-mlir's decompositions, with top-k and sort as reductions,
    scatter as comparisons, group norm without `as_strided`, roll as
    slices and embedding bags as products."""
    import torch
    from torch_mlir.fx import get_decomposition_table
    aten = torch.ops.aten
    table = dict(get_decomposition_table())
    table[aten.topk.default] = _topk
    table[aten.sort.default] = _sort
    table[aten.native_group_norm.default] = _group_norm
    table[aten.gelu.default] = _gelu
    table[aten.roll.default] = _roll
    for bag in (aten.embedding_bag.default, aten.embedding_bag.padding_idx,
                aten._embedding_bag.default):
        table[bag] = _embedding_bag
    table[aten.detach.default] = _detach
    table[aten.index_put.default] = _index_put
    table[aten.index_add.default] = _index_add
    table[aten.scatter.src] = _scatter
    table[aten.scatter.value] = _scatter
    table[aten.scatter_add.default] = \
        lambda x, dim, index, src: _scatter(x, dim, index, src, add=True)
    table[aten.sort.stable] = \
        lambda x, *, stable=None, dim=-1, descending=False: _sort(
            x, dim, descending)
    return table


def _read_within(fd: int, timeout: float) -> bytes:
    """All of `fd` until its end, closing it; TimeoutError past `timeout`
    seconds."""
    import select
    import time
    deadline = time.monotonic() + timeout
    chunks = []
    with os.fdopen(fd, "rb", buffering=0) as source:
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([source], [], [], left)[0]:
                raise TimeoutError
            chunk = source.read(1 << 20)
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)


def _die_with(parent: int) -> None:
    """Makes the calling child die with `parent` (Linux's parent-death
    signal), so that an interpreter killed while its lowering runs leaves
    no child behind."""
    import ctypes
    import signal
    set_parent_death_signal = 1  # PR_SET_PDEATHSIG, linux/prctl.h
    try:
        ctypes.CDLL(None).prctl(set_parent_death_signal, signal.SIGKILL)
    except (AttributeError, OSError):
        return
    if os.getppid() != parent:  # it died before the signal was armed
        os._exit(1)


def _report(lower, sink: int) -> None:
    """The child's part: writes what `lower()` returns or raises to the
    `sink` pipe, pickled, and leaves without cleaning up."""
    import faulthandler
    import pickle
    faulthandler.disable()  # its death is the parent's to report
    try:
        outcome = ("text", lower())
    except BaseException as error:  # noqa: BLE001 - sent to the parent
        outcome = ("error", error)
    try:
        data = pickle.dumps(outcome)
    except Exception:  # pp's native errors do not pickle: their parts
        data = pickle.dumps(("native", _error_parts(outcome[1])))
    with os.fdopen(sink, "wb") as stream:
        stream.write(data)
    os._exit(0)


def _isolated(lower, program, timeout: float) -> str:
    """Runs `lower()` (the torch-mlir import and pp's marks, returning the
    module's text) in a forked child, so that a crash of torch-mlir's
    lowering cannot end the user's interpreter; re-raises what it raises,
    and turns its death, or a lowering past `timeout` seconds, into
    pp.ExportError naming the step's ops. The child dies with the
    interpreter, and with an interrupt of the wait."""
    import pickle
    import signal
    from . import ExportError
    parent = os.getpid()
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        _die_with(parent)
        _report(lower, write)
    os.close(write)
    try:
        data = _read_within(read, timeout)
    except BaseException as error:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        if not isinstance(error, TimeoutError):
            raise
        raise ExportError(
            f"torch-mlir's lowering to linalg did not finish in {timeout:g} "
            f"s (export's timeout); its PyTorch ops: {_op_lines(program)}"
        ) from None
    _, status = os.waitpid(pid, 0)
    if data:
        kind, value = pickle.loads(data)
        if kind == "error":
            raise value
        if kind == "native":
            raise _error_from_parts(*value)
        return value
    cause = (signal.Signals(os.WTERMSIG(status)).name
             if os.WIFSIGNALED(status) else f"exit {os.WEXITSTATUS(status)}")
    raise ExportError(f"torch-mlir's lowering to linalg crashed ({cause}) "
                      f"on this step; its PyTorch ops: {_op_lines(program)}")


def _error_parts(error):
    """A pp error as plain data: its class name, message and diagnostics
    (severity, location, message, notes), which pickle."""
    def parts(diagnostic):
        return (diagnostic.severity, diagnostic.location, diagnostic.message,
                [parts(note) for note in diagnostic.notes])
    return (type(error).__name__, str(error),
            [parts(d) for d in getattr(error, "diagnostics", [])])


def _error_from_parts(name, message, diagnostics):
    """The pp error `_error_parts` describes."""
    from . import Diagnostic
    import pp
    def build(severity, location, text, notes):
        return Diagnostic(severity, location, text,
                          [build(*note) for note in notes])
    error = getattr(pp, name, RuntimeError)(message)
    if diagnostics:
        error.diagnostics = [build(*d) for d in diagnostics]
    return error


def _ops_and_lines(program):
    """Each ATen op of the exported program (`aten.cumsum`) with the
    innermost frame of its stack, (path, line), where it has one."""
    for node in program.graph.nodes:
        calls = _model_frames(node.meta.get("stack_trace"))
        if node.op == "call_function" and calls:
            yield str(node.target).removesuffix(".default"), calls[-1]


def _op_lines(program) -> str:
    """The step's ATen ops with the model line each comes from, for a crash
    that names none."""
    seen = {}
    for name, (path, line) in _ops_and_lines(program):
        seen.setdefault(name, f"{path}:{line}")
    return "; ".join(f"{name} ({line})" for name, line in seen.items())


# The weight dimension each parameter of a module splits on, by style and
# module kind. PyTorch stores nn.Linear's weight as [out, in]:
# column-parallel splits the output features (and the bias), row-parallel
# the input features; row-parallel on nn.Embedding is PyTorch's
# vocabulary-parallel embedding (the table's rows), column-parallel splits
# its features. "vocab" names the vocabulary's split on either: an
# embedding's rows, a head's output features.
_STYLE_SPLITS = {
    ("colwise", "Linear"): {"weight": 0, "bias": 0},
    ("rowwise", "Linear"): {"weight": 1},
    ("colwise", "Embedding"): {"weight": 1},
    ("rowwise", "Embedding"): {"weight": 0},
    ("vocab", "Linear"): {"weight": 0, "bias": 0},
    ("vocab", "Embedding"): {"weight": 0},
}


def _style_name(style) -> str:
    """`colwise`, `rowwise` or `vocab` for a plan's style: a string, or
    PyTorch's ColwiseParallel()/RowwiseParallel() (whose layouts pp does
    not read: the compiler places activations and collectives itself)."""
    if isinstance(style, str) and style in ("colwise", "rowwise", "vocab"):
        return style
    try:
        from torch.distributed.tensor import parallel
        if isinstance(style, parallel.ColwiseParallel):
            return "colwise"
        if isinstance(style, parallel.RowwiseParallel):
            return "rowwise"
    except ImportError:
        pass
    raise ValueError(
        f"parallelize_plan: style {style!r} is not one pp takes ('colwise', "
        "'rowwise', 'vocab', or torch.distributed.tensor.parallel's "
        "ColwiseParallel() and RowwiseParallel())")


def _matches(pattern: str, name: str) -> bool:
    """Whether module path `name` matches a parallelize_module key: atoms
    separated by dots, each an fnmatch pattern (`blocks.*.attn.qkv`)."""
    import fnmatch
    atoms, parts = pattern.split("."), name.split(".")
    return len(atoms) == len(parts) and all(
        fnmatch.fnmatchcase(part, atom) for atom, part in zip(atoms, parts))


def _plan_splits(module, plan: Mapping[str, object],
                 tensor_parallel: Optional[int] = None) -> Dict[str, str]:
    """The `pp.split` of each parameter (by state_dict key) a
    parallelize_plan gives: module-path patterns as parallelize_module takes
    them, to styles. Raises ValueError naming the module for a pattern that
    matches no submodule, a module a style does not apply to (no weight,
    not nn.Linear or nn.Embedding), two styles on one module, or a split
    dimension `tensor_parallel` does not divide."""
    import torch
    modules = {name: m for name, m in module.named_modules() if name}
    splits: Dict[str, str] = {}
    styles: Dict[str, str] = {}
    for pattern, style in plan.items():
        style = _style_name(style)
        matched = [name for name in modules if _matches(pattern, name)]
        if not matched:
            raise ValueError(f"parallelize_plan: '{pattern}' matches no "
                             f"submodule of {type(module).__name__}")
        for name in matched:
            sub = modules[name]
            kind = type(sub).__name__
            if styles.setdefault(name, style) != style:
                raise ValueError(
                    f"parallelize_plan: module '{name}' is given both "
                    f"{styles[name]} and {style}")
            if not isinstance(getattr(sub, "weight", None), torch.Tensor):
                raise ValueError(
                    f"parallelize_plan: module '{name}' ({kind}) has no "
                    f"weight for {style} to split")
            dims = next((dims for (s, kind_name), dims
                         in _STYLE_SPLITS.items() if s == style and
                         isinstance(sub, getattr(torch.nn, kind_name))), None)
            if dims is None:
                raise ValueError(
                    f"parallelize_plan: {style} applies to nn.Linear and "
                    f"nn.Embedding; module '{name}' is {kind}")
            for param, dim in dims.items():
                value = getattr(sub, param, None)
                if value is None:
                    continue
                size = value.shape[dim]
                if tensor_parallel and size % tensor_parallel:
                    raise ValueError(
                        f"parallelize_plan: {style} splits dimension {dim} "
                        f"of '{name}.{param}' (size {size}) over "
                        f"{tensor_parallel} processes, which does not divide "
                        "it")
                splits[f"{name}.{param}"] = "[" + "[], " * dim + "[0]]"
    return splits

def _mark_arguments(func, inputs: int, targets: int, names: Sequence[str],
                    states: Sequence[str] = (),
                    splits: Mapping[str, str] = {},
                    packed: Mapping[str, int] = {}) -> None:
    """Sets `pp.target` on the target arguments, `pp.param` and `pp.name`
    (the state_dict key) on the weights and `pp.state` and `pp.name` on the
    states of the imported step, and `pp.state` (the argument's number) on
    the results after the loss holding the states' new values; names each
    argument's location (`inputs[0]`, `targets[0]`, the key): torch-mlir
    gives every argument its first user's location. `splits` are the
    weights' `pp.split`s by key (a parallelize_plan's); `packed` the
    inputs marked `pp.packed_input`, by role."""
    from torch_mlir import ir
    unit = ir.UnitAttr.get()
    role_of = {index: role for role, index in packed.items()}
    attrs = [ir.DictAttr.get({"pp.packed_input": ir.StringAttr.get(role_of[i])}
                             if i in role_of else {})
             for i in range(inputs)]
    attrs += [ir.DictAttr.get({"pp.target": unit}) for _ in range(targets)]
    attrs += [ir.DictAttr.get({"pp.param": unit,
                               "pp.name": ir.StringAttr.get(name),
                               **({"pp.split": ir.Attribute.parse(
                                   splits[name])} if name in splits else {})})
              for name in names]
    attrs += [ir.DictAttr.get({"pp.state": unit,
                               "pp.name": ir.StringAttr.get(name)})
              for name in states]
    func.attributes["arg_attrs"] = ir.ArrayAttr.get(attrs)
    if states:
        first = inputs + targets + len(names)
        i64 = ir.IntegerType.get_signless(64)
        func.attributes["res_attrs"] = ir.ArrayAttr.get(
            [ir.DictAttr.get({})] +
            [ir.DictAttr.get({"pp.state": ir.IntegerAttr.get(i64, first + i)})
             for i in range(len(states))])
    labels = ([f"inputs[{i}]" for i in range(inputs)] +
              [f"targets[{i}]" for i in range(targets)] + list(names) +
              list(states))
    for arg, label in zip(func.regions[0].blocks[0].arguments, labels):
        arg.set_location(ir.Location.file(label, 0, 0))


def _frames(location) -> List[str]:
    """The `file:line:col` frames of an MLIR location, innermost first
    (torch-mlir nests each op's call stack as call sites)."""
    return [f"{f}:{line}:{col}" for f, line, col in
            re.findall(r'"([^"]*)":(\d+):(\d+)', str(location))]


def _pytorch_op(program, frame: str) -> Optional[str]:
    """The ATen op of the exported program whose innermost stack frame is
    the line `frame` names (`aten.cumsum`), if one is."""
    path, line = frame.rsplit(":", 2)[:2]
    return next((name for name, at in _ops_and_lines(program)
                 if at == (path, line)), None)


def _check_dialects(func, program) -> None:
    """Raises pp.CompileError at the model's line for an op of a dialect
    pp-compile does not read (torch-mlir's `tm_tensor.scan` for
    `torch.cumsum`), naming the PyTorch op it comes from."""
    from . import CompileError, Diagnostic, _pp
    known = set(_pp.compiler_dialects())
    errors = []

    def visit(op):
        name = op.name
        if name.split(".")[0] in known:
            return ir.WalkResult.ADVANCE
        # This module's own frame (the step calling the model) says nothing.
        frames = [f for f in _frames(op.location)
                  if not f.startswith(__file__ + ":")] or _frames(op.location)
        source = _pytorch_op(program, frames[0]) if frames else None
        origin = f" (from PyTorch's {source})" if source else ""
        notes = [Diagnostic("note", f, "called from") for f in frames[1:]]
        errors.append(Diagnostic(
            "error", frames[0] if frames else "",
            f"'{name}'{origin} is an op of dialect "
            f"'{name.split('.')[0]}', which pp does not compile", notes))
        return ir.WalkResult.SKIP   # its body is the same op's

    from torch_mlir import ir
    func.operation.walk(visit, ir.WalkOrder.PRE_ORDER)
    if errors:
        error = CompileError("\n".join(["cannot export the model"] +
                                        [str(e) for e in errors]))
        error.diagnostics = errors
        raise error


def _insert_boundaries(func, kept: int = 1) -> None:
    """Turns the step's results after the first `kept` (the loss and the
    states' new values), the values `pipe_split` marked, into `pp.boundary`
    markers right after those values: the step returns the first `kept`
    results again."""
    from torch_mlir import ir
    from torch_mlir.dialects import func as func_d
    block = func.regions[0].blocks[0]
    ret = list(block.operations)[-1]
    results = list(ret.operands)[:kept]
    for value in list(ret.operands)[kept:]:
        owner = value.owner
        with ir.InsertionPoint(ret), ret.location:
            marker = ir.Operation.create("pp.boundary", results=[value.type],
                                         operands=[value])
        if isinstance(owner, ir.Block):
            marker.move_before(list(block.operations)[0])
        else:
            marker.move_after(owner)
        value.replace_all_uses_except(marker.result, [marker, ret.operation])
    with ir.InsertionPoint(ret), ret.location:
        func_d.ReturnOp(results)
    ret.erase()
    inputs = ir.FunctionType(ir.TypeAttr(
        func.attributes["function_type"]).value).inputs
    func.attributes["function_type"] = ir.TypeAttr.get(
        ir.FunctionType.get(inputs, [v.type for v in results]))


def _microbatch(example_inputs, microbatches: int):
    """The first micro-batch of each example input (dimension 0 divided)."""
    parts = []
    for i, x in enumerate(example_inputs):
        if x.dim() == 0 or x.shape[0] % microbatches:
            raise ValueError(f"example input {i} of shape {tuple(x.shape)} "
                             f"does not split into {microbatches} "
                             "micro-batches along dimension 0")
        parts.append(x[:x.shape[0] // microbatches].clone())
    return tuple(parts)


PACKED_INPUTS = ("document_ids", "position_ids")


def _check_packed_inputs(packed_inputs, example_inputs,
                         num_inputs: int) -> None:
    """TypeError or ValueError naming what in `packed_inputs` is not a
    role of PACKED_INPUTS mapped to an integer [rows, positions] input,
    each its own."""
    import torch
    if not isinstance(packed_inputs, Mapping):
        raise TypeError("packed_inputs must map 'document_ids' and "
                        "'position_ids' to input positions, got "
                        f"{packed_inputs!r}")
    for role, index in packed_inputs.items():
        if role not in PACKED_INPUTS:
            raise ValueError(f"packed_inputs: {role!r} is not one of "
                             f"{', '.join(PACKED_INPUTS)}")
        if isinstance(index, bool) or not isinstance(index, int) or \
                not 0 <= index < num_inputs:
            raise ValueError(f"packed_inputs: {role} is {index!r}, not the "
                             f"position of one of the {num_inputs} model "
                             "inputs")
        x = example_inputs[index]
        if not isinstance(x, torch.Tensor) or x.dim() != 2 or \
                x.dtype not in (torch.int32, torch.int64):
            raise ValueError(f"packed_inputs: {role} is input {index}, "
                             "which must be an int32 or int64 [rows, "
                             "positions] tensor like the token ids, got "
                             f"{getattr(x, 'dtype', type(x).__name__)} "
                             f"{tuple(getattr(x, 'shape', ()))}")
    if len(set(packed_inputs.values())) < len(packed_inputs):
        raise ValueError(f"packed_inputs: {dict(packed_inputs)} gives two "
                         "roles to one input")


def _check_renormalised_embeddings(module) -> None:
    """nn.Embedding(max_norm=...) rescales the weight rows it looks up in
    place, outside autograd, in each forward: a ValueError naming the
    module, where the trace would refuse the detach inside PyTorch's
    embedding."""
    import torch
    for name, sub in module.named_modules():
        if isinstance(sub, (torch.nn.Embedding, torch.nn.EmbeddingBag)) \
                and sub.max_norm is not None:
            raise ValueError(
                f"{name or type(module).__name__}: {type(sub).__name__}("
                f"max_norm={sub.max_norm}) rescales the rows it looks up in "
                "place in each forward, which pp's step does not: leave "
                "max_norm unset (or rescale the weight after each step)")


def _check_export_arguments(module, example_inputs, loss_fn, path,
                            num_targets, microbatches, split_points,
                            parallelize_plan, tensor_parallel,
                            timeout) -> None:
    """TypeError or ValueError naming the argument of `export` that is of
    the wrong kind, before anything is traced; `path` must name a file in
    an existing directory."""
    import torch
    if not isinstance(module, torch.nn.Module):
        raise TypeError(f"module must be a torch.nn.Module, got "
                        f"{type(module).__name__}")
    if isinstance(example_inputs, (torch.Tensor, str, bytes)) or \
            not isinstance(example_inputs, Sequence):
        raise TypeError("example_inputs must be a sequence (the module's "
                        "inputs, then the loss's targets), got "
                        f"{type(example_inputs).__name__}")
    if not callable(loss_fn):
        raise TypeError(f"loss_fn must be callable, got {loss_fn!r}")
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path must be a str or a path-like, got {path!r}")
    if os.path.isdir(path):
        raise ValueError(f"path: '{os.fspath(path)}' is a directory; export "
                         "writes the step to a file there and its weights "
                         "next to it")
    parent = os.path.dirname(os.path.abspath(os.fspath(path)))
    if not os.path.isdir(parent):
        raise ValueError(f"path: cannot write '{os.fspath(path)}': "
                         f"'{parent}' is not a directory")
    for name, value in (("num_targets", num_targets),
                        ("microbatches", microbatches),
                        ("tensor_parallel", tensor_parallel)):
        if value is not None and (isinstance(value, bool)
                                  or not isinstance(value, int)):
            raise TypeError(f"{name} must be an int, got {value!r}")
    if tensor_parallel is not None and tensor_parallel < 1:
        raise ValueError(f"tensor_parallel must be at least 1, got "
                         f"{tensor_parallel}")
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) \
            or not timeout > 0:
        raise ValueError(f"timeout must be a positive number of seconds, "
                         f"got {timeout!r}")
    if isinstance(split_points, (str, bytes)) or not all(
            isinstance(point, str) for point in split_points):
        raise TypeError(f"split_points must be a sequence of submodule "
                        f"names, got {split_points!r}")
    if parallelize_plan is not None and not isinstance(parallelize_plan,
                                                       Mapping):
        raise TypeError("parallelize_plan must be a mapping of module paths "
                        f"to styles, got {parallelize_plan!r}")


def export(module, example_inputs: Sequence[object], loss_fn: Callable,
           path: PathLike, *, num_targets: int = 1,
           function: str = "train_step",
           microbatches: Optional[int] = None, whole_batch: bool = False,
           scale_grads: bool = True, split_points: Sequence[str] = (),
           parallelize_plan: Optional[Mapping[str, object]] = None,
           tensor_parallel: Optional[int] = None,
           packed_inputs: Mapping[str, int] = {},
           timeout: float = 600.0) -> Exported:
    """Exports `loss_fn(module(*inputs), *targets)` as a pp training step.

    `example_inputs` are the module's inputs followed by the loss's
    `num_targets` targets, at the shapes of one global batch (dimension 0
    is what pp splits into micro-batches). The step, imported by
    torch-mlir's FX importer as linalg-on-tensors with PyTorch's source
    locations, goes to `path`; the module's parameters, in argument order
    after the data, are its `pp.param` arguments, and their current values
    go to `path` with the suffix `.safetensors`, named as the runtime names
    them (`param<argument>`, with the state_dict keys in the header's
    `__metadata__`). Buffers stay constants in the module, but for the
    running statistics of batch norms in training mode when exported with
    `microbatches`: those are `pp.state` arguments after the weights, whose
    new values the step returns after the loss (PyTorch's momentum update
    from each micro-batch's statistics, in micro-batch order), listed in
    `states` and written to the weights file as `state<argument>`. Other
    buffers the forward updates in place (and the running statistics at
    the whole batch's shape) keep their values, with a warning, and are
    listed in `frozen_buffers`.

    The step is traced at the micro-batch shape (each input's dimension 0
    divided by `microbatches`), as torch.distributed.pipelining traces its
    stages, and is marked as split (`pp.microbatches`), so pp pipelines any
    model torch.export takes without rewriting its batch dimension, and
    computes what PyTorch's loop over the micro-batches computes;
    `pp.compile` takes the count from the step. With `scale_grads`
    (PyTorch's default) each micro-batch's loss, and so its gradient, is
    divided by the count: a mean loss then gives the whole batch's loss and
    gradient. `whole_batch=True` (without `microbatches`) traces the whole
    batch instead and leaves the split to pp-split-microbatches when
    compiling, which splits only what it proves exact and refuses, at the
    model's line, what mixes rows of the batch (batch norm in training
    mode). Without either, `export` raises ValueError. Parameters with
    `requires_grad=False` are not trained: they are constants of the step,
    as buffers are, and are neither arguments nor in the weights file.
    `split_points` names submodules whose input
    starts a new stage (PyTorch's `split_spec` at `SplitPoint.BEGINNING`);
    `pipe_split(x)` in a forward marks `x` the same way.

    `parallelize_plan` splits weights over a tensor-parallel group
    (`pp.compile(..., tensor_parallel=T)`) in the vocabulary of
    torch.distributed.tensor.parallel's `parallelize_module`: module paths
    (`*` matches one name: `"blocks.*.mlp.0"`) to `"colwise"`,
    `"rowwise"`, `"vocab"` (an embedding's rows) or `ColwiseParallel()`
    and `RowwiseParallel()`; each becomes `pp.split` on the module's
    weight and bias (docs/TensorParallel.md). With `tensor_parallel`, a
    split dimension it does not divide is a ValueError naming the module.

    `packed_inputs` names the model inputs (positions in
    `example_inputs`, integer [rows, positions] tensors like the token
    ids) that the runtime fills, beside the token ids, with what a model
    needs to keep the documents of a packed row apart (as in packed
    training with FlashAttention's varlen kernels or document masks):
    `"document_ids"`, each token's document index within its row (the
    padding after the last its own), and `"position_ids"`, each token's
    position within its document. A model builds its block-diagonal
    causal mask `(doc[:, :, None] == doc[:, None, :]) & causal` and its
    position embeddings from them, and trains on packed rows
    (`pp.compile(..., packing=...)`) as on the unpacked documents; the
    program runs only on variable-length samples (docs/VariableLength.md).

    torch-mlir's lowering runs in a child process: its crash, or a
    lowering longer than `timeout` seconds, is pp.ExportError naming the
    step's PyTorch ops and their model lines.

    Returns the paths and the argument roles (`Exported`)."""
    import torch
    _check_export_arguments(module, example_inputs, loss_fn, path,
                            num_targets, microbatches, split_points,
                            parallelize_plan, tensor_parallel, timeout)
    _check_renormalised_embeddings(module)
    from torch_mlir import fx, ir

    # torch.export imports one tensor passed twice (the same ids as inputs
    # and targets) as one argument read in both places: copy each.
    example_inputs = tuple(x.clone() if isinstance(x, torch.Tensor) else x
                           for x in example_inputs)
    if not 0 <= num_targets <= len(example_inputs):
        raise ValueError(f"num_targets={num_targets}, but there are "
                         f"{len(example_inputs)} example inputs")
    num_inputs = len(example_inputs) - num_targets
    _check_packed_inputs(packed_inputs, example_inputs, num_inputs)
    for i, x in enumerate(example_inputs):
        if isinstance(x, torch.Tensor) and x.dim() and not x.shape[0]:
            raise ValueError(f"example input {i} of shape {tuple(x.shape)} "
                             "has no rows: the batch is dimension 0")
    parameters = dict(module.named_parameters())
    weights = {name: p for name, p in parameters.items() if p.requires_grad}
    frozen_params = {name: p.detach().clone()
                     for name, p in parameters.items() if not p.requires_grad}
    if not weights:
        raise ValueError(f"{type(module).__name__} has no parameters that "
                         "require grad, so there is nothing to train")
    if whole_batch and microbatches is not None:
        raise ValueError("whole_batch=True traces the whole batch, which pp "
                         "splits when compiling: pass microbatches to "
                         "pp.compile, not to export")
    if not whole_batch and microbatches is None:
        raise ValueError(
            "export traces the step at the micro-batch shape, as "
            "torch.distributed.pipelining traces its stages: pass "
            "microbatches=N (dimension 0 of the example inputs is split in "
            "N), or whole_batch=True to trace the whole batch and let pp "
            "split it (docs/PyTorch.md)")
    if microbatches is not None:
        if microbatches < 1:
            raise ValueError(f"microbatches must be at least 1, got "
                             f"{microbatches}")
        example_inputs = _microbatch(example_inputs, microbatches)
    scale = 1.0 / microbatches if microbatches and scale_grads else 1.0
    names = list(weights)
    splits = _plan_splits(module, parallelize_plan or {}, tensor_parallel)
    updated = _updated_buffers(module, example_inputs[:num_inputs])
    # Running statistics follow each micro-batch only in a step traced at
    # the micro-batch's shape.
    states = tuple(
        _key(prefix, name)
        for prefix in (_tracked_norms(module, updated)
                       if microbatches is not None else ())
        for name in _STATISTICS)
    frozen = tuple(name for name in updated if name not in states)
    if frozen:
        warnings.warn(
            f"{type(module).__name__}: the forward updates buffers "
            f"{', '.join(frozen)} in place; pp keeps these buffers as they "
            "are (batch norm's running statistics are updated only when "
            "exported with `microbatches`; docs/PyTorch.md)", stacklevel=2)
    buffers = dict(module.named_buffers())
    step = _training_step(module, loss_fn, names, num_inputs, scale, updated,
                          states, frozen_params)
    args = (example_inputs + tuple(w.detach() for w in weights.values()) +
            tuple(buffers[name].detach().clone() for name in states))
    hooks = _mark_split_points(module, split_points)
    try:
        program = torch.export.export(step, args, strict=False)
    finally:
        for hook in hooks:
            hook.remove()
    _check_gradient_stops(program)
    _check_static(program)
    _check_loss(program, loss_fn)
    _copy_listed_constants(program)

    def lower() -> str:
        imported = fx.export_and_import(program, output_type="linalg-on-tensors",
                                        func_name=function,
                                        decomposition_table=_decompositions())
        with imported.context:
            imported.context.allow_unregistered_dialects = True
            func = next(op for op in imported.body.operations
                        if op.operation.name == "func.func")
            _check_dialects(func, program)
            if len(program.graph_signature.user_outputs) > 1 + len(states):
                _insert_boundaries(func, 1 + len(states))
            _mark_arguments(func, num_inputs, num_targets, names, states,
                            splits, packed_inputs)
            if microbatches is not None:
                func.attributes["pp.microbatches"] = ir.IntegerAttr.get(
                    ir.IntegerType.get_signless(64), microbatches)
            text = imported.operation.get_asm(enable_debug_info=True)
        return text

    text = _isolated(lower, program, timeout)
    path = pathlib.Path(path)
    path.write_text(text)
    first = len(example_inputs)
    runtime_names = {f"param{first + i}": name for i, name in enumerate(names)}
    runtime_names.update({f"state{first + len(names) + i}": name
                          for i, name in enumerate(states)})
    values = {**weights, **{name: buffers[name] for name in states}}
    weights_path = path.with_suffix(".safetensors")
    write_safetensors(weights_path,
                      {key: values[name]
                       for key, name in runtime_names.items()},
                      {"format": "pt", "producer": "pp.torch",
                       "names": json.dumps(runtime_names)})
    return Exported(mlir=path, weights=weights_path, names=runtime_names,
                    inputs=tuple(range(num_inputs)),
                    targets=tuple(range(num_inputs, first)),
                    microbatches=microbatches,
                    frozen_buffers=frozen, states=states, splits=splits,
                    frozen_params=frozen_params,
                    packed_inputs=dict(packed_inputs))


# check_split's SGD rate: a step of the gradient times a large rate keeps
# the weights' rounding out of the gradient read back from them.
_SPLIT_LR = 1024.0


@dataclasses.dataclass
class SplitCheck:
    """What `check_split` found: the refusal (`refused`, the CompileError),
    or the step's loss under pp and PyTorch and the largest gradient
    difference relative to the largest gradient of the same weight;
    `exact` when they are within the check's tolerances."""

    refused: Optional[Exception] = None
    pp_loss: Optional[float] = None
    torch_loss: Optional[float] = None
    gradient_difference: Optional[float] = None
    rtol: float = 1e-5
    gradient_tolerance: float = 1e-4

    @property
    def exact(self) -> bool:
        return (self.refused is None and
                abs(self.pp_loss - self.torch_loss) <=
                self.rtol * abs(self.torch_loss) and
                self.gradient_difference <= self.gradient_tolerance)


def _loop_step(module, batch, loss_fn, microbatches: int, num_targets: int,
               scale: float, order) -> float:
    """PyTorch's loop over the micro-batches of `batch` (rows in `order`):
    the gradients accumulate in `module`; returns the summed loss."""
    parts = [x[order].chunk(microbatches) for x in batch]
    inputs = len(batch) - num_targets
    total = 0.0
    module.zero_grad()
    for micro in zip(*parts):
        loss = loss_fn(module(*micro[:inputs]), *micro[inputs:]) * scale
        loss.backward()
        total += loss.item()
    return total


def _gradient_difference(module, stepped: Mapping[str, object]) -> float:
    """The largest difference between the gradient pp's step implies (the
    weights' change over the rate) and `module`'s, relative to the largest
    gradient of the same weight."""
    import torch
    difference = 0.0
    for name, parameter in module.named_parameters():
        if not parameter.requires_grad:
            continue
        implied = (parameter.detach() - stepped[name]) / _SPLIT_LR
        # A parameter the loss does not read gets no gradient (None).
        expected = (parameter.grad if parameter.grad is not None else
                    torch.zeros_like(parameter))
        largest = max(expected.abs().max().item(), 1e-30)
        difference = max(difference,
                         (implied - expected).abs().max().item() / largest)
    return difference


def check_split(module, batch: Sequence[object], loss_fn: Callable,
                microbatches: int, directory: Optional[PathLike] = None, *,
                num_targets: int = 1, mean_loss: bool = True,
                rtol: float = 1e-5,
                gradient_tolerance: float = 1e-4) -> SplitCheck:
    """Checks that pp splits `module`'s step into `microbatches` exactly:
    exports it at the whole shape of `batch` (inputs, then `num_targets`
    targets), compiles it for that many micro-batches on one stage, runs
    one SGD step on `batch` and compares the loss and every gradient with
    PyTorch's loop over the same micro-batches, each loss divided by their
    count when `mean_loss` (a loss with a divisor the shapes fix, a mean)
    or summed (a divisor from the data, F.cross_entropy's). A split pp
    refuses comes back as `refused`; `exact` says whether one it takes
    matches. `module` is not changed; files go to `directory` (a temporary
    one by default)."""
    if directory is None:
        import tempfile
        with tempfile.TemporaryDirectory() as scratch:
            return check_split(module, batch, loss_fn, microbatches,
                               pathlib.Path(scratch),
                               num_targets=num_targets, mean_loss=mean_loss,
                               rtol=rtol,
                               gradient_tolerance=gradient_tolerance)
    import copy

    import numpy as np
    import torch
    from . import CompileError, compile, run, sample_order
    directory = pathlib.Path(directory)
    module = copy.deepcopy(module)
    with warnings.catch_warnings():
        # Buffers updated in place (running statistics) stay as they are.
        warnings.simplefilter("ignore", UserWarning)
        exported = export(module, tuple(batch), loss_fn,
                          directory / "whole.mlir", num_targets=num_targets,
                          whole_batch=True)
    tolerances = dict(rtol=rtol, gradient_tolerance=gradient_tolerance)
    try:
        program = compile(exported.mlir, stages=1, microbatches=microbatches,
                          opt_level=0)
    except CompileError as error:
        return SplitCheck(refused=error, **tolerances)
    paths = [directory / f"batch{i}.npy" for i in range(len(batch))]
    for path, x in zip(paths, batch):
        np.save(path, x.numpy())
    saved = directory / "stepped.safetensors"
    result = run(program, steps=1, lr=_SPLIT_LR, init_weights=exported.weights,
                 data=[str(p) for p in paths], save=saved, timeout=300)
    rows = batch[0].shape[0]
    order = torch.as_tensor(sample_order(rows, 0, rows))
    total = _loop_step(module, batch, loss_fn, microbatches, num_targets,
                       1 / microbatches if mean_loss else 1.0, order)
    return SplitCheck(
        pp_loss=result.losses[0], torch_loss=total,
        gradient_difference=_gradient_difference(
            module, exported.state_dict(saved)),
        **tolerances)
