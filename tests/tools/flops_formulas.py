#!/usr/bin/env python3
"""The FLOPs and bytes of one PyTorch operator call, from what a Kineto trace records of it
(stdlib only): "Input Dims" (one shape per schema argument), "Input type" (one name per
argument) and, since PyTorch 2.1, "Concrete Inputs" (the values of scalars and int lists, as
strings; "" for tensors).

An independent second reading of Stallscope's operator cost table: this module never reads
analysis/data/operator_flops.txt. Its table of operators and argument positions below is
taken from PyTorch's aten/src/ATen/native/native_functions.yaml (argument order of each
schema), its tensor-math formulas from torch/utils/flop_counter.py (FlopCounterMode:
mm_flop, addmm_flop, bmm_flop, baddbmm_flop, conv_flop_count, conv_backward_flop,
sdpa_flop_count, sdpa_backward_flop_count), and the constants of the memory-bound formulas
(FLOPs per element) are Stallscope's documented conventions. Where a convention differs from
FlopCounterMode the place says so ("Deviation").

    cost = operator_cost("aten::mm", [[64, 128], [128, 256]], ["float", "float"])
    cost.flops == 4194304.0, cost.model is True, cost.exact is True

    python3 flops_formulas.py --self-test     hand-computed cases, exit 0 = all pass
"""
import math
import sys
from collections import namedtuple

# What one call costs. flops/bytes are floats or None ("the shapes do not fit the formula",
# "no Input type"); model: the formula is tensor math (model FLOPs, MFU); exact: False when
# the figure rests on an assumption (conv without concrete stride/padding/dilation, the
# approximate output of a backward-input convolution).
Cost = namedtuple("Cost", "formula model flops bytes exact")

# ---------------------------------------------------------------------------------------
# Element sizes of the tensor dtypes as "Input type" names them (c10's demangled C++ type
# names). Anything else ("Scalar", "Int", "Bool", "GenericList", "TensorList", "", ...) is
# not a tensor. GCC-built PyTorch names int64 "long int", Clang-built "long" (the HTA traces).
DTYPE_SIZE = {
    "float": 4,
    "double": 8,
    "c10::Half": 2, "Half": 2,
    "c10::BFloat16": 2, "BFloat16": 2,
    "long int": 8, "int64_t": 8, "long": 8,
    "int": 4,
    "short int": 2,
    "signed char": 1, "unsigned char": 1, "bool": 1,
    "c10::Float8_e4m3fn": 1, "c10::Float8_e5m2": 1,
    "c10::Float8_e4m3fnuz": 1, "c10::Float8_e5m2fnuz": 1,
}

MODEL_FORMULAS = {"mm", "bmm", "matmul", "linear", "conv", "conv_backward",
                  "conv_backward_input", "sdpa", "sdpa_backward"}

# ---------------------------------------------------------------------------------------
# The operators: name -> (formula, {parameter: argument position or constant}).
# Positions are 0-based indices into the schema's arguments (keyword-only ones included: the
# profiler records every argument on the stack), as native_functions.yaml declares them.
T = {}


def _rule(names, formula, **params):
    for n in names.split():
        T["aten::" + n] = (formula, params)


# Matrix multiplies.
#   mm(Tensor self, Tensor mat2)                       bmm(Tensor self, Tensor mat2)
#   addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta, Scalar alpha)
#   _addmm_activation(Tensor self, Tensor mat1, Tensor mat2, *, beta, alpha, bool use_gelu)
#   baddbmm(Tensor self, Tensor batch1, Tensor batch2, *, beta, alpha)
#   _scaled_mm(Tensor self, Tensor mat2, Tensor scale_a, Tensor scale_b, ...)
#   matmul(Tensor self, Tensor other)                  linear(Tensor input, Tensor weight, Tensor? bias)
_rule("mm _scaled_mm", "mm", a=0, b=1)
_rule("addmm _addmm_activation", "mm", a=1, b=2)   # the bias (self) costs no FLOPs (addmm_flop)
_rule("bmm", "bmm", a=0, b=1)
_rule("baddbmm", "bmm", a=1, b=2)                  # as baddbmm_flop: bias ignored
_rule("matmul", "matmul", a=0, b=1)
_rule("linear", "linear", x=0, w=1)

# Convolutions.
#   conv{1,2,3}d(Tensor input, Tensor weight, Tensor? bias, stride, padding, dilation, int groups)
#     (the .padding overload has `str padding` at the same place: 'same' / 'valid')
#   conv_transpose{1,2,3}d(Tensor input, Tensor weight, Tensor? bias, stride, padding,
#     output_padding, int groups, dilation)
#   convolution / _convolution(Tensor input, Tensor weight, Tensor? bias, stride, padding,
#     dilation, bool transposed, output_padding, int groups[, benchmark, ...])
#   cudnn_convolution(Tensor self, Tensor weight, padding, stride, dilation, groups, ...)
#   miopen_convolution(Tensor self, Tensor weight, Tensor? bias, padding, stride, dilation, groups, ...)
_rule("conv1d conv2d conv3d", "conv", x=0, w=1, stride=3, padding=4, dilation=5, groups=6)
# Note: the schema puts groups at 6 and dilation at 7 here (after output_padding).
_rule("conv_transpose1d conv_transpose2d conv_transpose3d", "conv", x=0, w=1, stride=3,
      padding=4, groups=6, dilation=7, transposed=True)
_rule("convolution _convolution", "conv", x=0, w=1, stride=3, padding=4, dilation=5,
      transposed=6, groups=8)
_rule("cudnn_convolution", "conv", x=0, w=1, padding=2, stride=3, dilation=4, groups=5)
_rule("miopen_convolution", "conv", x=0, w=1, padding=3, stride=4, dilation=5, groups=6)
#   convolution_backward(Tensor grad_output, Tensor input, Tensor weight, SymInt[]? bias_sizes,
#     stride, padding, dilation, bool transposed, output_padding, groups, bool[3] output_mask)
#   cudnn_convolution_backward(Tensor self, Tensor grad_output, Tensor weight, padding, stride,
#     dilation, groups, benchmark, deterministic, allow_tf32, bool[2] output_mask)   (<= 1.10)
#   miopen_convolution_backward(Tensor self, Tensor grad_output, Tensor weight, padding, stride,
#     dilation, groups, benchmark, deterministic, bool[3] output_mask)   (no allow_tf32: mask at 9)
#   cudnn_convolution_backward_input(int[] self_size, Tensor grad_output, Tensor weight, ...)
_rule("convolution_backward", "conv_backward", gout=0, x=1, w=2, transposed=7, mask=10)
_rule("cudnn_convolution_backward", "conv_backward", x=0, gout=1, w=2, mask=10)
_rule("miopen_convolution_backward", "conv_backward", x=0, gout=1, w=2, mask=9)
_rule("cudnn_convolution_backward_input", "conv_backward_input", gout=1, w=2)

# Attention (q, k, v; is_causal where the schema has it).
#   scaled_dot_product_attention(q, k, v, Tensor? attn_mask, float dropout_p, bool is_causal, ...)
#   _scaled_dot_product_flash_attention(q, k, v, float dropout_p, bool is_causal, ...)
#   _scaled_dot_product_flash_attention_for_cpu(q, k, v, float dropout_p, bool is_causal, ...)
#   _scaled_dot_product_efficient_attention(q, k, v, Tensor? attn_bias, bool compute_log_sumexp,
#     float dropout_p, bool is_causal, ...)
#   _scaled_dot_product_cudnn_attention(q, k, v, Tensor? attn_bias, bool compute_log_sumexp,
#     float dropout_p, bool is_causal, ...)
#   _flash_attention_forward(q, k, v, cum_seq_q, cum_seq_k, max_q, max_k, dropout_p, bool is_causal, ...)
#     q/k/v as [batch, seq, heads, dim]
_rule("scaled_dot_product_attention", "sdpa", q=0, k=1, v=2, causal=5)
_rule("_scaled_dot_product_flash_attention _scaled_dot_product_flash_attention_for_cpu",
      "sdpa", q=0, k=1, v=2, causal=4)
_rule("_scaled_dot_product_efficient_attention _scaled_dot_product_cudnn_attention",
      "sdpa", q=0, k=1, v=2, causal=6)
_rule("_flash_attention_forward", "sdpa", q=0, k=1, v=2, causal=8, layout="bshd")
#   _scaled_dot_product_flash_attention_backward(grad_out, q, k, v, out, logsumexp, cum_seq_q,
#     cum_seq_k, max_q, max_k, float dropout_p, bool is_causal, ...)
#   _scaled_dot_product_efficient_attention_backward(grad_out_, q, k, v, attn_bias, out,
#     logsumexp, philox_seed, philox_offset, float dropout_p, bool[4] grad_input_mask,
#     bool is_causal, ...)
#   _scaled_dot_product_cudnn_attention_backward(grad_out, q, k, v, out, logsumexp, philox_seed,
#     philox_offset, attn_bias, cum_seq_q, cum_seq_k, max_q, max_k, float dropout_p,
#     bool is_causal, ...)      <- is_causal at 14 in the current schema (11 is max_q)
#   _flash_attention_backward(grad_out, q, k, v, out, logsumexp, cum_seq_q, cum_seq_k, max_q,
#     max_k, float dropout_p, bool is_causal, ...)
_rule("_scaled_dot_product_flash_attention_backward _scaled_dot_product_efficient_attention_backward",
      "sdpa_backward", q=1, k=2, v=3, causal=11)
_rule("_scaled_dot_product_cudnn_attention_backward", "sdpa_backward", q=1, k=2, v=3, causal=14)
_rule("_flash_attention_backward", "sdpa_backward", q=1, k=2, v=3, causal=11, layout="bshd")

# Normalisation: 5 FLOPs an element forward, 8 backward; RMS norm 4 and 7 (conventions).
#   layer_norm / native_layer_norm / rms_norm / _fused_rms_norm / group_norm /
#   native_group_norm / batch_norm / native_batch_norm / _native_batch_norm_legit[_no_training]
#   / cudnn_batch_norm / miopen_batch_norm: (Tensor input, ...)
#   native_layer_norm_backward / native_group_norm_backward / native_batch_norm_backward /
#   _fused_rms_norm_backward: (Tensor grad_out, Tensor input, ...)
#   cudnn_batch_norm_backward / miopen_batch_norm_backward: (Tensor input, Tensor grad_output, ...)
_rule("layer_norm native_layer_norm group_norm native_group_norm batch_norm native_batch_norm "
      "_native_batch_norm_legit _native_batch_norm_legit_no_training cudnn_batch_norm "
      "miopen_batch_norm", "norm", x=0, per=5)
_rule("rms_norm _fused_rms_norm", "norm", x=0, per=4)
_rule("native_layer_norm_backward native_group_norm_backward native_batch_norm_backward",
      "norm", x=1, per=8)
_rule("_fused_rms_norm_backward", "norm", x=1, per=7)
_rule("cudnn_batch_norm_backward miopen_batch_norm_backward", "norm", x=0, per=8)

# Softmax: (Tensor self, int dim, ...); backward: (Tensor grad_output, Tensor output, ...).
_rule("softmax _softmax log_softmax _log_softmax", "softmax", x=0, per=5)
_rule("_softmax_backward_data _log_softmax_backward_data", "softmax", x=0, per=4)

# Elementwise: per FLOPs an element of the broadcast of the tensor inputs.
_rule("add add_ sub sub_ mul mul_ div div_ neg rsqrt sqrt exp pow relu relu_ "
      "threshold_backward gelu gelu_backward silu silu_ silu_backward sigmoid "
      "sigmoid_backward tanh tanh_backward where clamp clamp_min native_dropout "
      "native_dropout_backward", "elementwise", per=1)
_rule("addcmul_ addcdiv_", "elementwise", per=2)

# Reductions: (Tensor self, ...); per FLOPs an input element.
_rule("sum mean amax max", "reduction", x=0, per=1)
_rule("norm linalg_vector_norm", "reduction", x=0, per=2)

# Embedding(Tensor weight, Tensor indices, ...): no FLOPs, rows read and written.
_rule("embedding", "embedding", w=0, idx=1)

TABLE = T
del T


# ---------------------------------------------------------------------------------------
# Helpers.

def _is_shape(d):
    return isinstance(d, list) and all(isinstance(x, int) and not isinstance(x, bool) for x in d)


def _numel(shape):
    return math.prod(shape)  # [] (a 0-dim tensor) -> 1


def _broadcast(shapes):
    """numpy/torch broadcasting of several shapes; None when they do not broadcast."""
    rank = max((len(s) for s in shapes), default=0)
    out = [1] * rank
    for s in shapes:
        for i, v in enumerate(s):
            j = rank - len(s) + i
            if out[j] == 1:
                out[j] = v
            elif v != 1 and v != out[j]:
                return None
    return out


def _arg(dims, i):
    """The shape at argument i, or None (absent or not one flat shape)."""
    if i is None or i >= len(dims) or not _is_shape(dims[i]):
        return None
    return dims[i]


def _concrete(concrete, i):
    """The concrete value string at argument i; None when absent or empty."""
    if concrete is None or i is None or i >= len(concrete):
        return None
    v = concrete[i]
    if v is None:
        return None
    v = str(v).strip()
    return v if v else None


def _parse_ints(s):
    """'[2, 2]' -> [2, 2]; '3' -> [3]; None when not ints."""
    t = s.strip()
    if t.startswith("[") and t.endswith("]"):
        t = t[1:-1]
    parts = [p.strip() for p in t.split(",") if p.strip()]
    try:
        return [int(p) for p in parts]
    except ValueError:
        return None


def _parse_bools(s):
    t = s.strip()
    if t.startswith("[") and t.endswith("]"):
        t = t[1:-1]
    out = []
    for p in t.split(","):
        p = p.strip()
        if p in ("True", "true", "1"):
            out.append(True)
        elif p in ("False", "false", "0"):
            out.append(False)
        elif p:
            return None
    return out


def _per_dim(values, n):
    """A list of per-spatial-dim ints: one value applies to every dim."""
    if values is None:
        return None
    if len(values) == 1:
        return values * n
    return values if len(values) == n else None


def _tensor_inputs(dims, types):
    """(index, shape, element size) of each tensor input. With "Input type": the inputs whose
    type is a tensor dtype; without it: every flat shape (size None)."""
    out = []
    for i, d in enumerate(dims):
        if types is not None:
            t = types[i] if i < len(types) else None
            if t in DTYPE_SIZE and _is_shape(d):
                out.append((i, d, DTYPE_SIZE[t]))
        elif _is_shape(d):
            out.append((i, d, None))
    return out


# ---------------------------------------------------------------------------------------
# Formulas: each returns (flops, output numel, exact) or None when the shapes do not fit.
# flops are exact integers (Python ints) until the end.

def _mm(p, dims, concrete):
    a, b = _arg(dims, p["a"]), _arg(dims, p["b"])
    if a is None or b is None or len(a) != 2 or len(b) != 2 or a[1] != b[0]:
        return None
    m, k, n = a[0], a[1], b[1]
    return 2 * m * k * n, m * n, True                       # mm_flop / addmm_flop


def _bmm(p, dims, concrete):
    a, b = _arg(dims, p["a"]), _arg(dims, p["b"])
    if a is None or b is None or len(a) != 3 or len(b) != 3 or a[0] != b[0] or a[2] != b[1]:
        return None
    bb, m, k, n = a[0], a[1], a[2], b[2]
    return 2 * bb * m * k * n, bb * m * n, True             # bmm_flop / baddbmm_flop


def _matmul(p, dims, concrete):
    # torch.matmul: 1-D . 1-D is a dot product; a 1-D first operand is [1, K] (its dim is
    # dropped from the result), a 1-D second one [K, 1]; otherwise the batch dims broadcast.
    # (FlopCounterMode never sees matmul: it decomposes into mm/bmm; same count.)
    a, b = _arg(dims, p["a"]), _arg(dims, p["b"])
    if a is None or b is None or not a or not b:
        return None
    if len(a) == 1 and len(b) == 1:
        if a[0] != b[0]:
            return None
        return 2 * a[0], 1, True
    a2 = [1, a[0]] if len(a) == 1 else a
    b2 = [b[0], 1] if len(b) == 1 else b
    m, k, k2, n = a2[-2], a2[-1], b2[-2], b2[-1]
    if k != k2:
        return None
    batch = _broadcast([a2[:-2], b2[:-2]])
    if batch is None:
        return None
    nb = _numel(batch)
    return 2 * nb * m * k * n, nb * m * n, True


def _linear(p, dims, concrete):
    x, w = _arg(dims, p["x"]), _arg(dims, p["w"])
    if x is None or w is None or len(x) < 1 or len(w) != 2 or x[-1] != w[1]:
        return None
    rows, k, n = _numel(x[:-1]), w[1], w[0]
    return 2 * rows * k * n, rows * n, True


def _conv_params(p, concrete, nsp):
    """(stride, padding, dilation, all concrete?) per spatial dim; padding may be 'same'.
    Without Concrete Inputs, or with any of the entries empty: stride 1, 'same' padding (the
    output as large as the input) and not exact - all or nothing."""
    names = [k for k in ("stride", "padding", "dilation") if k in p]
    raw = {k: _concrete(concrete, p[k]) for k in names}
    if concrete is None or any(v is None for v in raw.values()):
        return [1] * nsp, "same", [1] * nsp, False
    stride = _per_dim(_parse_ints(raw["stride"]), nsp) if "stride" in raw else [1] * nsp
    dilation = _per_dim(_parse_ints(raw["dilation"]), nsp) if "dilation" in raw else [1] * nsp
    pad_s = raw.get("padding", "0").strip().strip("'\"")
    if pad_s == "same":
        padding = "same"
    elif pad_s == "valid":
        padding = [0] * nsp
    else:
        padding = _per_dim(_parse_ints(pad_s), nsp)
    if stride is None or dilation is None or padding is None:
        return None
    return stride, padding, dilation, True


def _conv(p, dims, concrete, out_spatial=None):
    x, w = _arg(dims, p["x"]), _arg(dims, p["w"])
    if x is None or w is None or len(w) < 3 or len(x) != len(w):
        return None
    nsp = len(w) - 2
    transposed = p.get("transposed", False)
    if not isinstance(transposed, bool):          # a position: read it
        v = _concrete(concrete, transposed)
        transposed = v == "True"
    params = _conv_params(p, concrete, nsp)
    if params is None:
        return None
    stride, padding, dilation, exact = params
    # Not recorded here, the output size may be known from the backward of the same input and
    # weight shapes (operator_cost's out_spatial): then the count is exact.
    hinted = not exact and not transposed and out_spatial is not None and len(out_spatial) == nsp
    groups_s = _concrete(concrete, p.get("groups"))
    groups = 1
    if groups_s is not None:
        g = _parse_ints(groups_s)
        if g is None or len(g) != 1:
            return None
        groups = g[0]
    batch, in_sp, ksp = x[0], x[2:], w[2:]
    if transposed:
        # conv_flop_count: a transposed convolution does its work per INPUT point.
        conv_sp = in_sp
        # Output (bytes only): the input spatial size x stride (an approximation that leaves
        # out padding, kernel and output_padding); channels w[1] * groups.
        out_numel = batch * w[1] * groups * _numel([i * s for i, s in zip(in_sp, stride)])
    else:
        if hinted:
            out_sp, exact = list(out_spatial), True
        elif padding == "same":
            out_sp = list(in_sp)
        else:
            out_sp = [(i + 2 * pd - dl * (k - 1) - 1) // s + 1
                      for i, pd, dl, k, s in zip(in_sp, padding, dilation, ksp, stride)]
        if any(o <= 0 for o in out_sp):
            return None
        conv_sp = out_sp
        out_numel = batch * w[0] * _numel(out_sp)
    flops = 2 * batch * _numel(conv_sp) * _numel(w)          # conv_flop_count
    return flops, out_numel, exact


def _conv_backward(p, dims, concrete):
    # conv_backward_flop: grad_input = conv_transpose(grad_out, w) and grad_weight =
    # conv(x, grad_out) each cost what the forward costs: 2 * B * prod(w) * prod(spatial),
    # spatial = grad_output's (the forward's output), the input's for a transposed forward.
    g, x, w = _arg(dims, p["gout"]), _arg(dims, p["x"]), _arg(dims, p["w"])
    if g is None or x is None or w is None or len(w) < 3 or len(g) != len(w) or len(x) != len(w):
        return None
    transposed = False
    if "transposed" in p:
        transposed = _concrete(concrete, p["transposed"]) == "True"
    sp = x[2:] if transposed else g[2:]
    f = 2 * g[0] * _numel(w) * _numel(sp)
    mask = None
    ms = _concrete(concrete, p.get("mask"))
    if ms is not None:
        mask = _parse_bools(ms)
    if mask is None or len(mask) < 2:
        mask = [True, True]                                   # unknown: both gradients
    flops = f * (int(mask[0]) + int(mask[1]))
    out_numel = (_numel(x) if mask[0] else 0) + (_numel(w) if mask[1] else 0)
    return flops, out_numel, True


def _conv_backward_input(p, dims, concrete):
    g, w = _arg(dims, p["gout"]), _arg(dims, p["w"])
    if g is None or w is None or len(w) < 3 or len(g) != len(w):
        return None
    f = 2 * g[0] * _numel(w) * _numel(g[2:])
    # The input's size is an int list (self_size), not a shape: approximated, not exact.
    return f, g[0] * w[1] * _numel(g[2:]), False


def _sdpa_shape(p, dims):
    q, k, v = _arg(dims, p["q"]), _arg(dims, p["k"]), _arg(dims, p["v"])
    if q is None or k is None or v is None or len(q) != 4 or len(k) != 4 or len(v) != 4:
        return None
    if p.get("layout", "bhsd") == "bshd":
        b, s_q, h, d_q = q
        s_k = k[1]
    else:
        b, h, s_q, d_q = q
        s_k = k[2]
    d_v = v[3]
    return b, h, s_q, s_k, d_q, d_v, q, k, v


def _causal(p, concrete):
    """(is_causal, known): unknown when the table gives a position the trace does not fill."""
    if p.get("causal") is None:
        return False, True
    v = _concrete(concrete, p.get("causal"))
    return v == "True", v in ("True", "False")


def _sdpa(p, dims, concrete):
    s = _sdpa_shape(p, dims)
    if s is None:
        return None
    b, h, s_q, s_k, d_q, d_v, _, _, _ = s
    # sdpa_flop_count: q @ k^T (2*b*h*s_q*s_k*d_q) + scores @ v (2*b*h*s_q*s_k*d_v).
    flops = 2 * b * h * s_q * s_k * d_q + 2 * b * h * s_q * s_k * d_v
    causal, known = _causal(p, concrete)
    if causal:
        # Deviation: FlopCounterMode counts the masked half of a causal attention too
        # ("We aren't accounting for causal attention here"); Stallscope halves it.
        flops //= 2
    # Causality not recorded: counted in full (as FlopCounterMode does), not exact.
    return flops, b * h * s_q * d_v, known


def _sdpa_backward(p, dims, concrete):
    s = _sdpa_shape(p, dims)
    if s is None:
        return None
    b, h, s_q, s_k, d_q, d_v, q, k, v = s
    # FlopCounterMode's sdpa_backward_flop_count: five bmms, 2*b*h*s_q*s_k*(3*d_q + 2*d_v)
    # (recomputing the scores q @ k^T, then dO @ v^T, P^T @ dO, dS @ k, q^T @ dS): 2.5x the
    # forward when d_q == d_v.
    flops = 2 * b * h * s_q * s_k * (3 * d_q + 2 * d_v)
    causal, known = _causal(p, concrete)
    if causal:
        flops //= 2                                           # deviation, as the forward
    return flops, _numel(q) + _numel(k) + _numel(v), known


def _per_x(p, dims, concrete, out_is_x):
    x = _arg(dims, p["x"])
    if x is None:
        return None
    n = _numel(x)
    return p["per"] * n, (n if out_is_x else 0), True


def _norm(p, dims, concrete):
    return _per_x(p, dims, concrete, True)


def _softmax(p, dims, concrete):
    return _per_x(p, dims, concrete, True)


def _reduction(p, dims, concrete):
    return _per_x(p, dims, concrete, False)                  # output: not counted


FORMULAS = {"mm": _mm, "bmm": _bmm, "matmul": _matmul, "linear": _linear, "conv": _conv,
            "conv_backward": _conv_backward, "conv_backward_input": _conv_backward_input,
            "sdpa": _sdpa, "sdpa_backward": _sdpa_backward, "norm": _norm,
            "softmax": _softmax, "reduction": _reduction}


# ---------------------------------------------------------------------------------------

def operator_cost(name, input_dims, input_types=None, concrete_inputs=None, out_spatial=None):
    """The Cost of one call of `name`, or None when the operator is not in the table.

    input_dims: the "Input Dims" list; input_types: "Input type" (None when the trace has
    none: bytes are then None); concrete_inputs: "Concrete Inputs" or None; out_spatial: a
    convolution's output spatial sizes when known from elsewhere (its backward's grad_output),
    used when its stride, padding or dilation are not recorded."""
    rule = TABLE.get(name)
    if rule is None:
        return None
    formula, p = rule
    model = formula in MODEL_FORMULAS
    dims = input_dims if isinstance(input_dims, list) else []
    types = input_types if isinstance(input_types, list) else None
    concrete = concrete_inputs if isinstance(concrete_inputs, list) else None
    tensors = _tensor_inputs(dims, types)

    skip_bytes = set()
    if formula == "elementwise":
        if not tensors:
            return Cost(formula, model, None, None, False)
        shape = _broadcast([s for _, s, _ in tensors])
        if shape is None:
            return Cost(formula, model, None, None, False)
        n = _numel(shape)
        res = (p["per"] * n, n, True)
    elif formula == "embedding":
        w, idx = _arg(dims, p["w"]), _arg(dims, p["idx"])
        if w is None or idx is None or len(w) != 2:
            return Cost(formula, model, None, None, False)
        # The rows gathered are read and written: 2 * numel(idx) * row length, in the
        # weight's type; the weight table itself is not counted.
        res = (0, 2 * _numel(idx) * w[1], True)
        skip_bytes.add(p["w"])
    elif formula == "conv":
        res = _conv(p, dims, concrete, out_spatial)
    else:
        res = FORMULAS[formula](p, dims, concrete)
    if res is None:
        return Cost(formula, model, None, None, False)
    flops, out_numel, exact = res

    nbytes = None
    if types is not None:
        total = sum(_numel(s) * size for i, s, size in tensors if i not in skip_bytes)
        if out_numel:
            if tensors:
                total += out_numel * tensors[0][2]   # the output in the first tensor input's type
            else:
                total = None
        nbytes = None if total is None else float(total)
    return Cost(formula, model, float(flops), nbytes, exact)


def is_table_operator(name):
    return name in TABLE


# ---------------------------------------------------------------------------------------
# Self-test: hand-computed cases, at least one per formula family.

def _self_test():
    fails = []

    def check(label, got, want):
        if got != want and not (isinstance(got, float) and isinstance(want, (int, float))
                                and want != 0 and abs(got - want) <= 1e-12 * abs(want)):
            fails.append(f"{label}: got {got!r}, want {want!r}")

    def c(name, dims, types=None, conc=None):
        r = operator_cost(name, dims, types, conc)
        assert r is not None, name
        return r

    F = ["float", "float"]
    # mm: 2*64*128*256
    r = c("aten::mm", [[64, 128], [128, 256]], F)
    check("mm flops", r.flops, 4194304)
    check("mm bytes", r.bytes, (64 * 128 + 128 * 256 + 64 * 256) * 4)
    check("mm model", r.model, True)
    check("mm exact", r.exact, True)
    # addmm: bias ignored for FLOPs, counted in bytes.
    r = c("aten::addmm", [[1000], [32, 2048], [2048, 1000], [], []],
          ["float", "float", "float", "Int", "Int"])
    check("addmm flops", r.flops, 2 * 32 * 2048 * 1000)       # 131,072,000
    check("addmm bytes", r.bytes, (1000 + 32 * 2048 + 2048 * 1000 + 32 * 1000) * 4)
    r = c("aten::mm", [[64, 128], [127, 256]], F)
    check("mm mismatched K", r.flops, None)
    # bmm / baddbmm: 2*128*128*64*128
    r = c("aten::bmm", [[128, 128, 64], [128, 64, 128]], F)
    check("bmm flops", r.flops, 268435456)
    check("bmm bytes", r.bytes, (128 * 128 * 64 * 2 + 128 * 128 * 128) * 4)
    r = c("aten::baddbmm", [[128, 128, 128], [128, 128, 64], [128, 64, 128], [], []],
          ["c10::BFloat16"] * 3 + ["Scalar", "Scalar"])
    check("baddbmm flops", r.flops, 268435456)
    check("baddbmm bytes", r.bytes, (128 * 128 * 128 * 2 + 128 * 128 * 64 * 2) * 2)
    # matmul: dot, vector-matrix, matrix-vector, broadcast batch.
    check("matmul 1x1", c("aten::matmul", [[4096], [4096]], F).flops, 8192)
    check("matmul 1x1 bytes", c("aten::matmul", [[4096], [4096]], F).bytes, (4096 * 2 + 1) * 4)
    check("matmul 1x2", c("aten::matmul", [[64], [64, 32]], F).flops, 2 * 64 * 32)
    check("matmul 2x1", c("aten::matmul", [[16, 64], [64]], F).flops, 2 * 16 * 64)
    r = c("aten::matmul", [[8, 1, 16, 64], [4, 64, 32]], F)    # batch [8,4]
    check("matmul broadcast flops", r.flops, 2 * 32 * 16 * 64 * 32)   # 2,097,152
    check("matmul broadcast bytes", r.bytes, (8 * 16 * 64 + 4 * 64 * 32 + 32 * 16 * 32) * 4)
    check("matmul 3x1", c("aten::matmul", [[2, 16, 64], [64]], F).flops, 2 * 2 * 16 * 64)
    check("matmul bad batch", c("aten::matmul", [[3, 16, 64], [2, 64, 8]], F).flops, None)
    # linear: x [16,128,512], w [2048,512]: 2*2048*512*2048
    r = c("aten::linear", [[16, 128, 512], [2048, 512], [2048]], ["float"] * 3)
    check("linear flops", r.flops, 4294967296)
    check("linear bytes", r.bytes, (16 * 128 * 512 + 2048 * 512 + 2048 + 2048 * 2048) * 4)
    # _scaled_mm as mm (fp8 in, 1 byte each)
    r = c("aten::_scaled_mm", [[64, 128], [128, 256], [], []],
          ["c10::Float8_e4m3fn", "c10::Float8_e4m3fn", "float", "float"])
    check("_scaled_mm flops", r.flops, 4194304)
    check("_scaled_mm bytes", r.bytes, 64 * 128 + 128 * 256 + 4 + 4 + 64 * 256)
    # conv: ResNet-50's first layer, stride 2, padding 3 -> 112 x 112.
    dims = [[32, 3, 224, 224], [64, 3, 7, 7], [], [], [], [], []]
    types = ["float", "float", "", "ScalarList", "ScalarList", "ScalarList", "Int"]
    r = c("aten::conv2d", dims, types, ["", "", "", "[2, 2]", "[3, 3]", "[1, 1]", "1"])
    check("conv2d flops", r.flops, 7552892928)               # 2*32*112*112*64*3*7*7
    check("conv2d exact", r.exact, True)
    check("conv2d model", r.model, True)
    check("conv2d bytes", r.bytes, (32 * 3 * 224 * 224 + 64 * 3 * 7 * 7 + 32 * 64 * 112 * 112) * 4)
    # single ints apply to every spatial dim
    r = c("aten::conv2d", dims, types, ["", "", "", "2", "3", "1", "1"])
    check("conv2d scalar params", r.flops, 7552892928)
    # without Concrete Inputs: the output as large as the input (4x), not exact
    r = c("aten::conv2d", dims, types)
    check("conv2d no concrete", r.flops, 2 * 32 * 224 * 224 * 64 * 3 * 7 * 7)  # 30,211,571,712
    check("conv2d no concrete exact", r.exact, False)
    # ... unless the output size is known from the backward of the same shapes.
    r = operator_cost("aten::conv2d", dims, types, None, [112, 112])
    check("conv2d output from backward", r.flops, 7552892928)
    check("conv2d output from backward exact", r.exact, True)
    r = c("aten::conv2d", dims, types, ["", "", "", "[2, 2]", "", "[1, 1]", "1"])
    check("conv2d empty padding", r.flops, 30211571712)
    check("conv2d empty padding exact", r.exact, False)
    # padding='same' / 'valid' (conv2d.padding): 3x3 on 56x56
    d3 = [[8, 64, 56, 56], [64, 64, 3, 3], [], [], [], [], []]
    r = c("aten::conv2d", d3, types, ["", "", "", "[1, 1]", "'same'", "[1, 1]", "1"])
    check("conv2d same", r.flops, 2 * 8 * 56 * 56 * 64 * 64 * 9)
    r = c("aten::conv2d", d3, types, ["", "", "", "[1, 1]", "valid", "[1, 1]", "1"])
    check("conv2d valid", r.flops, 2 * 8 * 54 * 54 * 64 * 64 * 9)
    # dilation 2, padding 2 keeps 56; stride 2 -> 28
    r = c("aten::conv2d", d3, types, ["", "", "", "[2, 2]", "[2, 2]", "[2, 2]", "1"])
    check("conv2d dilated", r.flops, 2 * 8 * 28 * 28 * 64 * 64 * 9)
    # grouped (depthwise) conv: w [64,1,3,3], groups 64
    r = c("aten::conv2d", [[8, 64, 56, 56], [64, 1, 3, 3], [], [], [], [], []], types,
          ["", "", "", "[1, 1]", "[1, 1]", "[1, 1]", "64"])
    check("depthwise flops", r.flops, 2 * 8 * 56 * 56 * 64 * 9)
    # aten::convolution with transposed at 6 and groups at 8; cudnn_convolution's order
    r = c("aten::convolution", [[32, 3, 224, 224], [64, 3, 7, 7], [], [], [], [], [], [], []],
          ["float", "float", "", "ScalarList", "ScalarList", "ScalarList", "Scalar", "ScalarList", "Scalar"],
          ["", "", "", "[2, 2]", "[3, 3]", "[1, 1]", "False", "[0, 0]", "1"])
    check("convolution flops", r.flops, 7552892928)
    r = c("aten::cudnn_convolution", [[32, 3, 224, 224], [64, 3, 7, 7], [], [], [], [], [], [], []],
          ["float", "float"] + ["ScalarList"] * 3 + ["Scalar"] * 4,
          ["", "", "[3, 3]", "[2, 2]", "[1, 1]", "1", "False", "False", "True"])
    check("cudnn_convolution flops", r.flops, 7552892928)
    # transposed: FLOPs from the input's spatial size; output = in * stride, w[1]*groups chans
    # x [4,64,28,28], w [64,32,2,2] (Cin, Cout/g), stride 2: 2*4*28*28*64*32*2*2
    r = c("aten::conv_transpose2d", [[4, 64, 28, 28], [64, 32, 2, 2], [], [], [], [], [], []],
          ["float", "float", "", "ScalarList", "ScalarList", "ScalarList", "Scalar", "ScalarList"],
          ["", "", "", "[2, 2]", "[0, 0]", "[0, 0]", "1", "[1, 1]"])
    check("conv_transpose2d flops", r.flops, 51380224)
    check("conv_transpose2d bytes", r.bytes, (4 * 64 * 28 * 28 + 64 * 32 * 4 + 4 * 32 * 56 * 56) * 4)
    check("conv_transpose2d exact", r.exact, True)
    r = c("aten::convolution", [[4, 64, 28, 28], [64, 32, 2, 2], [], [], [], [], [], [], []],
          ["float", "float", "", "ScalarList", "ScalarList", "ScalarList", "Scalar", "ScalarList", "Scalar"],
          ["", "", "", "[2, 2]", "[0, 0]", "[1, 1]", "True", "[0, 0]", "2"])
    check("convolution transposed flops", r.flops, 51380224)
    check("convolution transposed bytes (groups 2)", r.bytes,
          (4 * 64 * 28 * 28 + 64 * 32 * 4 + 4 * 64 * 56 * 56) * 4)
    # conv1d / conv3d
    r = c("aten::conv1d", [[2, 16, 100], [32, 16, 5], [], [], [], [], []], types,
          ["", "", "", "[1]", "[0]", "[1]", "1"])
    check("conv1d flops", r.flops, 2 * 2 * 96 * 32 * 16 * 5)
    r = c("aten::conv3d", [[1, 4, 8, 16, 16], [8, 4, 3, 3, 3], [], [], [], [], []], types,
          ["", "", "", "[1, 2, 2]", "[1, 1, 1]", "[1, 1, 1]", "1"])
    check("conv3d flops", r.flops, 2 * 1 * (8 * 8 * 8) * 8 * 4 * 27)
    # conv backward: ResNet-50 1x1 conv, grad_out [32,2048,7,7], w [2048,512,1,1]
    # F = 2*32*2048*512*49 = 3,288,334,336; both gradients: 2F
    f = 2 * 32 * 2048 * 512 * 1 * 1 * 49
    dims_cb = [[32, 512, 7, 7], [32, 2048, 7, 7], [2048, 512, 1, 1]] + [[]] * 8
    types_cb = ["float"] * 3 + ["GenericList"] * 3 + ["Int", "Bool", "Bool", "Bool", "GenericList"]
    r = c("aten::cudnn_convolution_backward", dims_cb, types_cb)
    check("cudnn_convolution_backward flops", r.flops, 2 * f)
    check("cudnn_convolution_backward exact", r.exact, True)
    check("cudnn_convolution_backward bytes", r.bytes,
          (32 * 512 * 49 + 32 * 2048 * 49 + 2048 * 512 + 32 * 512 * 49 + 2048 * 512) * 4)
    r = c("aten::convolution_backward",
          [[32, 2048, 7, 7], [32, 512, 7, 7], [2048, 512, 1, 1]] + [[]] * 8,
          ["float"] * 3 + ["ScalarList"] * 4 + ["Scalar", "ScalarList", "Scalar", "ScalarList"],
          ["", "", "", "[2048]", "[1, 1]", "[0, 0]", "[1, 1]", "False", "[0, 0]", "1",
           "[False, True, True]"])
    check("convolution_backward weight only", r.flops, f)
    check("convolution_backward weight only bytes", r.bytes,
          (32 * 2048 * 49 + 32 * 512 * 49 + 2048 * 512 + 2048 * 512) * 4)
    # stride-2 first layer backward: grad_out [32,64,112,112] gives the spatial size
    r = c("aten::convolution_backward",
          [[32, 64, 112, 112], [32, 3, 224, 224], [64, 3, 7, 7]] + [[]] * 8,
          ["float"] * 3 + ["ScalarList"] * 4 + ["Scalar", "ScalarList", "Scalar", "ScalarList"],
          ["", "", "", "[0]", "[2, 2]", "[3, 3]", "[1, 1]", "False", "[0, 0]", "1",
           "[True, True, False]"])
    check("convolution_backward both", r.flops, 2 * 7552892928)
    # transposed backward: the input's spatial size
    r = c("aten::convolution_backward",
          [[4, 32, 56, 56], [4, 64, 28, 28], [64, 32, 2, 2]] + [[]] * 8,
          ["float"] * 3 + ["ScalarList"] * 4 + ["Scalar", "ScalarList", "Scalar", "ScalarList"],
          ["", "", "", "[32]", "[2, 2]", "[0, 0]", "[1, 1]", "True", "[0, 0]", "1",
           "[True, False, False]"])
    check("convolution_backward transposed", r.flops, 51380224)
    # miopen: mask at 9
    r = c("aten::miopen_convolution_backward", dims_cb[:10],
          ["float"] * 3 + ["ScalarList"] * 3 + ["Scalar"] * 3 + ["ScalarList"],
          ["", "", "", "[0, 0]", "[1, 1]", "[1, 1]", "1", "False", "False", "[True, False, False]"])
    check("miopen_convolution_backward input only", r.flops, f)
    # backward input: one gradient, not exact
    r = c("aten::cudnn_convolution_backward_input",
          [[], [32, 2048, 7, 7], [2048, 512, 1, 1]] + [[]] * 7,
          ["GenericList", "float", "float"] + ["GenericList"] * 3 + ["Int", "Bool", "Bool", "Bool"])
    check("cudnn_convolution_backward_input flops", r.flops, f)
    check("cudnn_convolution_backward_input exact", r.exact, False)
    check("cudnn_convolution_backward_input bytes", r.bytes,
          (32 * 2048 * 49 + 2048 * 512 + 32 * 512 * 49) * 4)
    # sdpa: q,k,v [2,16,1024,64]: 2*2*16*1024*1024*64*2 = 8,589,934,592; causal half
    q = [2, 16, 1024, 64]
    bf = ["c10::BFloat16"] * 3
    r = c("aten::scaled_dot_product_attention", [q, q, q, [], [], [], []],
          bf + ["", "Scalar", "Scalar", "Scalar"], ["", "", "", "", "0.", "False", ""])
    check("sdpa flops", r.flops, 8589934592)
    check("sdpa bytes", r.bytes, (3 * 2 * 16 * 1024 * 64 + 2 * 16 * 1024 * 64) * 2)
    r = c("aten::scaled_dot_product_attention", [q, q, q, [], [], [], []],
          bf + ["", "Scalar", "Scalar", "Scalar"], ["", "", "", "", "0.", "True", ""])
    check("sdpa causal", r.flops, 4294967296)
    r = c("aten::_scaled_dot_product_flash_attention", [q, q, q, [], [], [], []],
          bf + ["Scalar"] * 4, ["", "", "", "0.", "True", "False", ""])
    check("flash causal at 4", r.flops, 4294967296)
    r = c("aten::_scaled_dot_product_efficient_attention", [q, q, q, [], [], [], [], []],
          bf + ["", "Scalar", "Scalar", "Scalar", ""], ["", "", "", "", "True", "0.", "False", ""])
    check("efficient not causal (compute_log_sumexp True at 4)", r.flops, 8589934592)
    # cross attention, s_q 128, s_k 1024, d_v 32: 2*2*16*128*1024*(64+32)
    r = c("aten::scaled_dot_product_attention", [[2, 16, 128, 64], [2, 16, 1024, 64],
                                                [2, 16, 1024, 32]], bf)
    check("sdpa cross", r.flops, 805306368)
    # bshd layout: q [b=2, s=1024, h=16, d=64]
    qb = [2, 1024, 16, 64]
    r = c("aten::_flash_attention_forward", [qb, qb, qb] + [[]] * 7, bf + ["", "", "Scalar", "Scalar", "Scalar", "Scalar", "Scalar"],
          [""] * 8 + ["False", "False"])
    check("flash fwd bshd", r.flops, 8589934592)
    # backward: FlopCounterMode's 2*b*h*s_q*s_k*(3*d_q+2*d_v), causal half
    r = c("aten::_scaled_dot_product_flash_attention_backward", [q, q, q, q, q, [2, 16, 1024]] + [[]] * 6,
          ["c10::BFloat16"] * 5 + ["float"] + [""] * 2 + ["Scalar"] * 4,
          [""] * 8 + ["1024", "1024", "0.", "True"])
    check("flash bwd causal", r.flops, 10737418240)
    check("flash bwd bytes", r.bytes, (5 * 2 * 16 * 1024 * 64 * 2 + 2 * 16 * 1024 * 4)
          + 3 * 2 * 16 * 1024 * 64 * 2)
    r = c("aten::_scaled_dot_product_efficient_attention_backward",
          [q, q, q, q, [], q, [2, 16, 1024]] + [[]] * 5, bf + ["c10::BFloat16"], None)
    check("efficient bwd no concrete", r.flops, 21474836480)
    check("efficient bwd causal unknown: not exact", r.exact, False)
    check("efficient bwd no-type bytes", c("aten::_flash_attention_backward", [qb] * 5).bytes, None)
    check("sdpa rank 3", c("aten::_flash_attention_forward", [[2048, 16, 64]] * 3).flops, None)
    check("sdpa model", r.model, True)
    # norm: layer norm 5/elt, backward 8 at x=1, rms 4
    r = c("aten::layer_norm", [[16, 128, 512], [], [512], [512], [], []],
          ["float", "ScalarList", "float", "float", "Scalar", "Scalar"])
    check("layer_norm flops", r.flops, 5 * 16 * 128 * 512)      # 5,242,880
    check("layer_norm bytes", r.bytes, (16 * 128 * 512 * 2 + 1024) * 4)
    check("layer_norm model", r.model, False)
    r = c("aten::native_layer_norm_backward", [[16, 128, 512], [16, 128, 512], [], [16, 128, 1],
                                             [16, 128, 1], [512], [512], []])
    check("layer_norm bwd flops", r.flops, 8 * 16 * 128 * 512)
    check("layer_norm bwd bytes without types", r.bytes, None)
    check("cudnn_batch_norm", c("aten::cudnn_batch_norm", [[32, 64, 112, 112], [64], [64], [64], [64], [], [], []]).flops,
          5 * 32 * 64 * 112 * 112)
    check("rms_norm", c("aten::rms_norm", [[4, 4096], [], [4096], []]).flops, 4 * 4 * 4096)
    # softmax 5/elt, backward 4/elt
    r = c("aten::_softmax", [[16, 8, 128, 128], [], [], [16, 8, 128, 128]],
          ["float", "Scalar", "Scalar", "float"])
    check("softmax flops", r.flops, 5 * 2097152)
    check("softmax bytes", r.bytes, 3 * 2097152 * 4)
    check("softmax bwd", c("aten::_softmax_backward_data", [[32, 1000], [32, 1000], [], []]).flops,
          4 * 32000)
    # elementwise: broadcast of the tensor inputs; scalars are not tensors
    r = c("aten::add", [[16, 128, 512], [512], []], ["float", "float", "Scalar"])
    check("add broadcast flops", r.flops, 16 * 128 * 512)
    check("add broadcast bytes", r.bytes, (16 * 128 * 512 * 2 + 512) * 4)
    r = c("aten::div", [[3, 224, 224], []], ["float", "long int"])
    check("div 0-dim tensor", r.flops, 3 * 224 * 224)
    check("div 0-dim tensor bytes", r.bytes, 3 * 224 * 224 * 4 * 2 + 8)
    r = c("aten::add", [[], [], []], ["long int", "long int", "Int"])
    check("add 0-dim", (r.flops, r.bytes), (1.0, 24.0))
    r = c("aten::addcmul_", [[1024], [1024], [1024], []], ["float"] * 3 + ["Scalar"])
    check("addcmul_ 2/elt", r.flops, 2048)
    check("mul no broadcast", c("aten::mul", [[3, 4], [5, 4]], F).flops, None)
    check("mul_ scalar", c("aten::mul_", [[64, 3, 7, 7], []], ["float", "double"]).flops, 64 * 147)
    check("mul_ scalar bytes", c("aten::mul_", [[64, 3, 7, 7], []], ["float", "double"]).bytes,
          64 * 147 * 4 + 8 + 64 * 147 * 4)
    # reductions: per * numel(x), output not counted
    r = c("aten::sum", [[32, 1000], [], [], []], ["float", "GenericList", "Bool", ""])
    check("sum", (r.flops, r.bytes), (32000.0, 128000.0))
    check("norm 2/elt", c("aten::linalg_vector_norm", [[1000], [], [], [], []]).flops, 2000)
    # embedding: 0 FLOPs; bytes = indices + 2 * numel(idx) * row * size(w)
    r = c("aten::embedding", [[151936, 4096], [32], [], [], []],
          ["c10::BFloat16", "long int", "Scalar", "Scalar", "Scalar"])
    check("embedding flops", r.flops, 0)
    check("embedding bytes", r.bytes, 32 * 8 + 2 * 32 * 4096 * 2)   # 524,544
    check("embedding model", r.model, False)
    # not in the table
    check("unknown operator", operator_cost("aten::empty", [[1]]), None)

    for f_ in fails:
        print("FAIL", f_)
    print(f"flops_formulas self-test: {len(fails)} failure(s)")
    return 1 if fails else 0


if __name__ == "__main__":
    if len(sys.argv) == 2 and sys.argv[1] == "--self-test":
        sys.exit(_self_test())
    print(__doc__)
    sys.exit(2)
