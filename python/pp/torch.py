"""PyTorch models into pp (docs/PyTorch.md): `export` runs torch-mlir's FX
importer on a training step whose weights are explicit arguments, marks
those arguments `pp.param` and the loss's targets `pp.target`, and writes
the module's weights next to the MLIR as the runtime's `--init-weights`
file. Everything the model then needs rewritten is a pp pass (`pp-compile`
runs them); this module only drives torch-mlir and names the arguments.

    exported = pp.torch.export(model, (x, t), F.mse_loss, "mlp.mlir")
    program = pp.compile(exported.mlir, stages=2, microbatches=4)
    pp.run(program, steps=3, init_weights=exported.weights)

torch and torch_mlir are imported when `export` runs, not with pp."""

from __future__ import annotations

import dataclasses
import json
import os
import pathlib
import warnings
from typing import Callable, Dict, Mapping, Sequence, Tuple, Union

__all__ = ["Exported", "export", "read_safetensors", "write_safetensors"]

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
    `targets` are the argument positions of the data."""

    mlir: pathlib.Path
    weights: pathlib.Path
    names: Dict[str, str]
    inputs: Tuple[int, ...]
    targets: Tuple[int, ...]
    # Buffers the module's forward updates in place (batch norm's running
    # statistics): the step computes with copies, so they keep their values.
    frozen_buffers: Tuple[str, ...] = ()

    def state_dict(self, path: PathLike):
        """The weights in a file pp wrote (`--save`, or `weights`) under the
        module's `state_dict` keys, as torch tensors for `load_state_dict`.
        A weight several stages hold (`param<i>.stage<s>`, the copies being
        equal after each update) is taken from its first stage."""
        import torch
        weights = {}
        for key, value in sorted(read_safetensors(path).items()):
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


def _training_step(module, loss_fn: Callable, names: Sequence[str],
                   num_inputs: int, updated: Sequence[str] = ()):
    """An nn.Module whose forward takes (inputs, targets, weights) and
    returns the loss: the weights become explicit arguments through
    torch.func.functional_call, so torch-mlir imports them as arguments
    rather than as constants. The `updated` buffers are copied first, so
    that their in-place update (which torch.export rejects on a constant)
    stays inside the step, where nothing reads it."""
    import torch
    buffers = dict(module.named_buffers())

    class TrainingStep(torch.nn.Module):
        def forward(self, *args):
            inputs = args[:num_inputs]
            targets = args[num_inputs:len(args) - len(names)]
            weights = dict(zip(names, args[len(args) - len(names):]))
            weights.update({name: buffers[name].clone() for name in updated})
            output = torch.func.functional_call(module, weights, inputs)
            return loss_fn(output, *targets)

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


def _decompositions():
    """torch-mlir's decompositions, with top-k and sort as reductions."""
    import torch
    from torch_mlir.fx import get_decomposition_table
    aten = torch.ops.aten
    table = dict(get_decomposition_table())
    table[aten.topk.default] = _topk
    table[aten.sort.default] = _sort
    table[aten.sort.stable] = \
        lambda x, *, stable=None, dim=-1, descending=False: _sort(
            x, dim, descending)
    return table


def _mark_arguments(func, inputs: int, targets: int,
                    names: Sequence[str]) -> None:
    """Sets `pp.target` on the target arguments and `pp.param` and
    `pp.name` (the state_dict key) on the weights of the imported step, and
    names each argument's location (`inputs[0]`, `targets[0]`, the key):
    torch-mlir gives every argument its first user's location."""
    from torch_mlir import ir
    unit = ir.UnitAttr.get()
    attrs = [ir.DictAttr.get({}) for _ in range(inputs)]
    attrs += [ir.DictAttr.get({"pp.target": unit}) for _ in range(targets)]
    attrs += [ir.DictAttr.get({"pp.param": unit,
                               "pp.name": ir.StringAttr.get(name)})
              for name in names]
    func.attributes["arg_attrs"] = ir.ArrayAttr.get(attrs)
    labels = ([f"inputs[{i}]" for i in range(inputs)] +
              [f"targets[{i}]" for i in range(targets)] + list(names))
    for arg, label in zip(func.regions[0].blocks[0].arguments, labels):
        arg.set_location(ir.Location.file(label, 0, 0))


def export(module, example_inputs: Sequence[object], loss_fn: Callable,
           path: PathLike, *, num_targets: int = 1,
           function: str = "train_step") -> Exported:
    """Exports `loss_fn(module(*inputs), *targets)` as a pp training step.

    `example_inputs` are the module's inputs followed by the loss's
    `num_targets` targets, at the shapes of one global batch (dimension 0
    is what pp splits into micro-batches). The step, imported by
    torch-mlir's FX importer as linalg-on-tensors with PyTorch's source
    locations, goes to `path`; the module's parameters, in argument order
    after the data, are its `pp.param` arguments, and their current values
    go to `path` with the suffix `.safetensors`, named as the runtime names
    them (`param<argument>`, with the state_dict keys in the header's
    `__metadata__`). Buffers stay constants in the module; those the
    forward updates in place (batch norm's running statistics) keep their
    values, with a warning, and are listed in `frozen_buffers`.

    Returns the paths and the argument roles (`Exported`)."""
    import torch
    from torch_mlir import fx, ir

    # torch.export imports one tensor passed twice (the same ids as inputs
    # and targets) as one argument read in both places: copy each.
    example_inputs = tuple(x.clone() if isinstance(x, torch.Tensor) else x
                           for x in example_inputs)
    if not 0 <= num_targets <= len(example_inputs):
        raise ValueError(f"num_targets={num_targets}, but there are "
                         f"{len(example_inputs)} example inputs")
    num_inputs = len(example_inputs) - num_targets
    weights = dict(module.named_parameters())
    if not weights:
        raise ValueError(f"{type(module).__name__} has no parameters, so "
                         "there is nothing to train")
    names = list(weights)
    updated = _updated_buffers(module, example_inputs[:num_inputs])
    if updated:
        warnings.warn(
            f"{type(module).__name__}: the forward updates buffers "
            f"{', '.join(updated)} in place (batch norm's running "
            "statistics); pp trains with the batch statistics but keeps "
            "these buffers as they are (docs/PyTorch.md)", stacklevel=2)
    step = _training_step(module, loss_fn, names, num_inputs, updated)
    args = example_inputs + tuple(w.detach() for w in weights.values())
    imported = fx.export_and_import(step, *args,
                                    output_type="linalg-on-tensors",
                                    func_name=function,
                                    decomposition_table=_decompositions())
    with imported.context:
        func = next(op for op in imported.body.operations
                    if op.operation.name == "func.func")
        _mark_arguments(func, num_inputs, num_targets, names)
        text = imported.operation.get_asm(enable_debug_info=True)
    path = pathlib.Path(path)
    path.write_text(text)
    first = len(example_inputs)
    runtime_names = {f"param{first + i}": name for i, name in enumerate(names)}
    weights_path = path.with_suffix(".safetensors")
    write_safetensors(weights_path,
                      {key: weights[name]
                       for key, name in runtime_names.items()},
                      {"format": "pt", "producer": "pp.torch",
                       "names": json.dumps(runtime_names)})
    return Exported(mlir=path, weights=weights_path, names=runtime_names,
                    inputs=tuple(range(num_inputs)),
                    targets=tuple(range(num_inputs, first)),
                    frozen_buffers=updated)
