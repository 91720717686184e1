"""adamw_accounting: what its public and hidden tests (and flops') share."""

from seam import Struct
from tests.checks import Mistake


def config(vocab_size, context_length, num_layers, d_model, num_heads, d_ff) -> Struct:
    """A TransformerConfig, passed by value."""
    return Struct("TransformerConfig", dict(vocab_size=vocab_size, context_length=context_length,
                                            num_layers=num_layers, d_model=d_model,
                                            num_heads=num_heads, d_ff=d_ff))


# ---- named mistakes (tests.checks.Mistake): what published answers to adamwAccounting get wrong --
# Each answer is the handout's formula with exactly that one slip, so a submission that makes it
# is told which one. P, A(B) as in the handout: P = 2VD + D + L(2D + 4D² + 3DF),
# A(B) = L(8BTD + 2BHT² + 2BTF) + BTD + 2BTV.

def _sizes(cfg):
    f = cfg.fields
    return (f["vocab_size"], f["context_length"], f["num_layers"], f["d_model"], f["num_heads"], f["d_ff"])


def params(cfg, ffn_matrices: int = 3, embeddings: int = 2) -> int:
    V, T, L, D, H, F = _sizes(cfg)
    return embeddings * V * D + D + L * (2 * D + 4 * D * D + ffn_matrices * D * F)


def activations(cfg, B: int, tt_per_head: int = 2, logits: int = 2) -> int:
    V, T, L, D, H, F = _sizes(cfg)
    return L * (8 * B * T * D + tt_per_head * B * H * T * T + 2 * B * T * F) + B * T * D + logits * B * T * V


def max_batch(cfg, memory_bytes: int, p: int, a1: int, bytes_per_param: int = 16) -> int:
    return max(0, (memory_bytes - bytes_per_param * p) // (4 * a1))


def _mistake(name, why, quote, **answers):
    """One slip, as a Mistake per function it shows in: answers maps function -> answer."""
    return {fn: Mistake(name, answer, why, "adamw_accounting", quote) for fn, answer in answers.items()}


_P2 = lambda cfg: params(cfg, ffn_matrices=2)  # noqa: E731
_TWO_MATRIX_FFN = _mistake(
    "a two-matrix FFN (P = 1,635,537,600 for GPT-2 XL)",
    "The FFN is SwiGLU: W1 and W3 map d_model to d_ff, W2 maps back; that is 3·D·F per block, not the "
    "2·D·F of a GELU MLP.", "a SwiGLU FFN with three d_model × d_ff matrices",
    parameter_count=_P2,
    peak_memory_bytes=lambda cfg, B: 16 * _P2(cfg) + 4 * activations(cfg, B),
    max_batch_size=lambda cfg, m: max_batch(cfg, m, _P2(cfg), activations(cfg, 1)),
    adamw_step_flops=lambda cfg, B: 6 * B * _sizes(cfg)[1] * _P2(cfg))
_TIED = _mistake(
    "tied embedding and LM head (V·D counted once)",
    "This model's token embedding and LM head are two matrices (untied): 2·V·D.", "untied token embedding and LM head",
    parameter_count=lambda cfg: params(cfg, embeddings=1))
_LOGITS_ONCE = _mistake(
    "the logits counted once",
    "The logits (B·T·V) and the cross-entropy's softmax over them (another B·T·V) are both kept: 2·B·T·V.",
    "plus the final norm and the logits with their cross-entropy",
    activation_count=lambda cfg, B: activations(cfg, B, logits=1))
_ONE_TT = _mistake(
    "one T×T matrix per head (the QKᵀ scores or their softmax left out)",
    "Each head keeps both its scores QKᵀ and their softmax for the backward pass: 2·B·H·T² per block.",
    "the attention scores and their softmax per head", activation_count=lambda cfg, B: activations(cfg, B, tt_per_head=1))
_PER_LAYER = _mistake(
    "attention matrices per layer, not per head",
    "Every head has its own T×T scores and softmax: 2·B·H·T² per block, not 2·B·T².",
    "the attention scores and their softmax per head",
    activation_count=lambda cfg, B: activations(cfg, B) - 2 * B * (_sizes(cfg)[4] - 1) * _sizes(cfg)[1] ** 2 * _sizes(cfg)[2])
_NO_GRADS = _mistake(
    "12 bytes per parameter (the gradients left out)",
    "fp32 AdamW keeps four numbers per parameter: the weight, its gradient, m and v: 16 bytes.",
    "16P + 4A bytes (fp32 weights, gradients, Adam m and v; fp32 activations)",
    peak_memory_bytes=lambda cfg, B: 12 * params(cfg) + 4 * activations(cfg, B))
_GIB = _mistake(
    "the budget read in GiB (80 GB taken as 80·2³⁰ bytes: GPT-2 XL would fit batch 3, not 2)",
    "Memory budgets are bytes, and GB here is 10⁹ bytes.", "GB = 10^9 bytes: 80 GB is `80 * 10**9`",
    max_batch_size=lambda cfg, m: max_batch(cfg, m * 2**30 // 10**9, params(cfg), activations(cfg, 1)))
_FORWARD_ONLY = _mistake(
    "forward FLOPs only (2·B·T·P)",
    "A training step is a forward (2 FLOPs per parameter per token) and a backward (4): 6·B·T·P.",
    "6·B·T·P (forward 2, backward 4 FLOPs per parameter per token)",
    adamw_step_flops=lambda cfg, B: 2 * B * _sizes(cfg)[1] * params(cfg))


def _with_attention(cfg, B, matmuls):
    V, T, L, D, H, F = _sizes(cfg)
    return 3 * (2 * B * T * params(cfg) + matmuls * 2 * L * B * T * T * D)


_ATTENTION_FLOPS = _mistake(
    "the attention matmuls (QKᵀ and AV) added to 6·B·T·P",
    "This problem counts 6·B·T·P only, as the notes do: the attention-score matmuls are left out.",
    "6·B·T·P (forward 2, backward 4 FLOPs per parameter per token)",
    adamw_step_flops=lambda cfg, B: _with_attention(cfg, B, 2))
_ONE_ATTENTION_MATMUL = _mistake(
    "one attention matmul (QKᵀ or AV, not both) added to 6·B·T·P",
    "This problem counts 6·B·T·P only; and had attention been counted, QKᵀ and AV are two matmuls.",
    "6·B·T·P (forward 2, backward 4 FLOPs per parameter per token)",
    adamw_step_flops=lambda cfg, B: _with_attention(cfg, B, 1))
_NO_TOKENS = _mistake(
    "the tokens per step forgotten (6·P per step instead of 6·B·T·P)",
    "Every step processes B sequences of T tokens, and each token costs 6·P FLOPs.",
    "steps × 6BTP / (peak_flops × mfu), in days",
    adamw_step_flops=lambda cfg, B: 6 * params(cfg),
    training_days=lambda cfg, B, steps, peak, mfu: steps * 6 * params(cfg) / (peak * mfu) / 86400)

_NO_CONTEXT = _mistake(
    "the context length forgotten (6·B·P per step instead of 6·B·T·P)",
    "Each of the B sequences in a step is T tokens long, and every token costs 6·P FLOPs.",
    "6·B·T·P (forward 2, backward 4 FLOPs per parameter per token)",
    adamw_step_flops=lambda cfg, B: 6 * B * params(cfg),
    training_days=lambda cfg, B, steps, peak, mfu: steps * 6 * B * params(cfg) / (peak * mfu) / 86400)

MISTAKES = [_TWO_MATRIX_FFN, _TIED, _LOGITS_ONCE, _ONE_TT, _PER_LAYER, _NO_GRADS, _GIB, _FORWARD_ONLY,
            _ATTENTION_FLOPS, _ONE_ATTENTION_MATMUL, _NO_TOKENS, _NO_CONTEXT]


def mistakes(function: str) -> list[Mistake]:
    """The named mistakes that show in ``function``'s answers."""
    return [m[function] for m in MISTAKES if function in m]
