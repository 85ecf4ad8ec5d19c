"""Model descriptions for the planner: a transformer's shape as data.

A :class:`ModelSpec` holds what the planner needs to count FLOPs, bytes and memory: layers,
hidden size, attention heads and KV heads, FFN width, vocabulary, training sequence length,
experts and top-k (mixture of experts), and the dtype of weights and activations. Shipped
models live in ``netsim/_data/models/*.yaml``, each number with its source; a user's own
model is a YAML file of the same fields (``netsim plan my-model.yaml``).

Parameter counts (``docs/plan.md``): per layer, attention ``h (q + 2 kv + q)`` with ``q =
heads x head_dim`` and ``kv = kv_heads x head_dim`` (or ``attention_params`` where the
attention is not multi-head, e.g. DeepSeek's MLA); a gated MLP (SwiGLU) ``3 h f``, a plain one
``2 h f``; MoE layers hold ``experts + shared_experts`` MLPs of width ``expert_ffn`` of which
``top_k + shared_experts`` run per token; embeddings ``V h``, twice unless tied.

>>> m = load_model("llama3-70b")
>>> f"{m.params / 1e9:.2f}B parameters"
'70.55B parameters'
>>> round(load_model("mixtral-8x7b").params / 1e9, 1)
46.7
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field

from ..errors import InputError, unknown_name
from .._inputs.schema import Strict, validate, load_yaml

__all__ = ["ModelSpec", "load_model", "model_names", "DTYPE_BYTES"]

#: Bytes per element of a weight or activation dtype.
DTYPE_BYTES = {"bf16": 2, "fp16": 2, "fp8": 1, "fp32": 4}
_DIR = Path(__file__).resolve().parent.parent / "_data" / "models"


class ModelSpec(Strict):
    """A transformer (see the module docstring); sizes are counts, ``seq_len`` in tokens."""

    name: str
    layers: int = Field(ge=1)
    hidden: int = Field(ge=1)
    heads: int = Field(ge=1)
    kv_heads: int | None = Field(default=None, ge=1)     # None: multi-head (= heads)
    head_dim: int | None = Field(default=None, ge=1)     # None: hidden / heads
    ffn: int = Field(ge=1)
    vocab: int = Field(ge=1)
    seq_len: int = Field(ge=1)
    gated_mlp: bool = True                  # SwiGLU: 3 matrices; GPT-style: 2
    tied_embeddings: bool = False
    experts: int = Field(default=0, ge=0)   # routed experts per MoE layer (0: dense)
    top_k: int = Field(default=1, ge=1)
    expert_ffn: int | None = Field(default=None, ge=1)   # None: ffn
    shared_experts: int = Field(default=0, ge=0)
    dense_layers: int = Field(default=0, ge=0)           # leading layers with a dense MLP
    attention_params: int | None = Field(default=None, ge=1)  # per layer, overrides heads
    dtype: Literal["bf16", "fp16", "fp8"] = "bf16"
    sources: list[str] = Field(min_length=1)

    # -- shapes ---------------------------------------------------------------------------
    @property
    def kv(self) -> int:
        return self.kv_heads or self.heads

    @property
    def dim_head(self) -> int:
        return self.head_dim or self.hidden // self.heads

    @property
    def moe(self) -> bool:
        return self.experts > 0

    @property
    def moe_layers(self) -> int:
        return self.layers - self.dense_layers if self.moe else 0

    @property
    def bytes_per_element(self) -> int:
        return DTYPE_BYTES[self.dtype]

    # -- parameters -----------------------------------------------------------------------
    @property
    def attn_params(self) -> float:
        """Attention weights of one layer (Q, K, V and output projections)."""
        if self.attention_params:
            return float(self.attention_params)
        q, kv = self.heads * self.dim_head, self.kv * self.dim_head
        return float(self.hidden * (2 * q + 2 * kv))

    def mlp_params(self, width: int) -> float:
        return float((3 if self.gated_mlp else 2) * self.hidden * width)

    @property
    def expert_params(self) -> float:
        """Weights of the routed experts of all MoE layers (the part ``ep`` shards)."""
        return self.moe_layers * self.experts * self.mlp_params(self.expert_ffn or self.ffn)

    @property
    def embedding_params(self) -> float:
        return float(self.vocab * self.hidden * (1 if self.tied_embeddings else 2))

    @property
    def layer_params(self) -> float:
        """Weights of all layers but the routed experts (dense MLPs, shared experts)."""
        dense = self.layers - self.moe_layers
        shared = self.moe_layers * self.shared_experts * self.mlp_params(self.expert_ffn
                                                                          or self.ffn)
        return (self.layers * self.attn_params + dense * self.mlp_params(self.ffn) + shared)

    @property
    def params(self) -> float:
        """Every weight: layers, routed experts, embeddings."""
        return self.layer_params + self.expert_params + self.embedding_params

    @property
    def active_params(self) -> float:
        """Weights one token's forward pass multiplies by (top-k of the routed experts)."""
        active_experts = (self.moe_layers * self.top_k
                          * self.mlp_params(self.expert_ffn or self.ffn))
        return self.layer_params + active_experts + self.embedding_params

    # -- FLOPs ------------------------------------------------------------------------------
    def flops_per_token(self, seq_len: int | None = None) -> float:
        """Training FLOPs per token (forward + backward = 3 x forward): 6 x the active
        weights met by matrix products (the input embedding is a lookup, so it is left out
        unless tied), plus the attention scores and their use, ``12 L s q`` per token
        (the PaLM/Megatron convention, which does not halve for the causal mask)."""
        s = seq_len or self.seq_len
        matmul = self.active_params - (0 if self.tied_embeddings
                                       else self.vocab * self.hidden)
        return 6.0 * matmul + 12.0 * self.layers * s * self.heads * self.dim_head


def model_names() -> list[str]:
    """The shipped models."""
    return sorted(p.stem for p in _DIR.glob("*.yaml"))


def load_model(name_or_path: str | Path) -> ModelSpec:
    """A shipped model by name, or a model YAML file (one-line errors)."""
    text = str(name_or_path)
    path = Path(text)
    if not (text.endswith((".yaml", ".yml")) or path.exists()):
        if text not in model_names():
            raise unknown_name("model", text, model_names())
        path = _DIR / f"{text}.yaml"
    if not path.is_file():
        raise InputError(f"model file {text!r} does not exist")
    data, root = load_yaml(path.read_text(), str(path))
    if not isinstance(data, dict):
        raise InputError(f"{path}: a model file is a mapping of fields (name, layers, ...)")
    return validate(ModelSpec, data, path, root=root)
