"""SDXL's text encoders (CLIP ViT-L and OpenCLIP ViT-bigG, transformers' CLIPTextModel layout) as DirectML
operators.

Token and position embeddings; pre-norm transformer layers (causal self-attention, MLP with QuickGELU for
CLIP-L and GELU for bigG). SDXL conditions on the penultimate layer's states of both; bigG also gives the
pooled embedding: the final layer, final_layer_norm, the state at the end-of-text token, text_projection.
"""

from __future__ import annotations

import directml as dml
from layers import Layers, causal_mask

ACTIVATIONS = {
    "quick_gelu": lambda x: dml.activation_swish(x, sigmoid_input_scale=1.702),
    "gelu": dml.activation_gelu,
}


def build(layers: Layers, config: dict, ids: dml.Expression, eos: dml.Expression | None):
    """For token ids [1, 1, 1, B * S] (int32): the penultimate states [1, 1, B * S, D] and, given `eos` (a one-hot
    [1, B, 1, S] of each sequence's end-of-text position), the projected pooled embedding [1, B, 1, P]."""
    L = layers
    table = L.array("text_model.embeddings.token_embedding.weight")
    positions = L.array("text_model.embeddings.position_embedding.weight")
    s = positions.shape[0]
    batch = ids.shape[3] // s
    d, heads = table.shape[1], config["num_attention_heads"]
    act = ACTIVATIONS[config.get("hidden_act", "quick_gelu")]
    eps = config.get("layer_norm_eps", 1e-5)

    x = dml.gather(L.constant(table, [1, 1, *table.shape]), ids, axis=2, index_dimensions=1)
    x = dml.reinterpret(x, [1, batch, s, d]) + dml.broadcast(L.constant(positions, [1, 1, s, d]), [1, batch, s, d])
    x = dml.reinterpret(x, [1, 1, batch * s, d])
    mask = causal_mask(L.graph, batch, heads, s)

    def layer(x, i):
        p = f"text_model.encoder.layers.{i}"
        names = [f"{p}.self_attn.{n}_proj" for n in ("q", "k", "v", "out")]
        x = x + L.attention(L.layer_norm(x, f"{p}.layer_norm1", eps), names, batch, heads, mask=mask)
        h = act(L.linear(L.layer_norm(x, f"{p}.layer_norm2", eps), f"{p}.mlp.fc1"))
        return x + L.linear(h, f"{p}.mlp.fc2")

    count = config["num_hidden_layers"]
    for i in range(count - 1):
        x = layer(x, i)
    if eos is None:
        return x, None
    final = L.layer_norm(layer(x, count - 1), "text_model.final_layer_norm", eps)
    pooled = dml.gemm(eos, dml.reinterpret(final, [1, batch, s, d]))                    # [1, B, 1, D]
    w = L.array("text_projection.weight")
    projected = dml.gemm(dml.reinterpret(pooled, [1, 1, batch, d]), L.constant(w, [1, 1, *w.shape]),
                         trans_b=dml.MatrixTransform.TRANSPOSE)
    return x, dml.reinterpret(projected, [1, batch, 1, w.shape[0]])
