"""SDXL's UNet (diffusers' UNet2DConditionModel with `text_time` conditioning) as DirectML operators.

conv_in; down blocks of ResNet blocks (with spatial transformers in the cross-attention ones) and strided
convolutions; a middle ResNet / transformer / ResNet; up blocks that take the down path's skips by channel
concatenation and upsample by nearest-neighbour 2x + convolution; GroupNorm + SiLU + conv_out. The timestep
embedding (time_embedding MLP) plus the added embedding (add_embedding MLP over the pooled text embedding and
the six size / crop conditions) feed every ResNet block.
"""

from __future__ import annotations

import directml as dml
from layers import Layers, upsample_nearest

def _per_block(value, blocks: int) -> list:
    return list(value) if isinstance(value, (list, tuple)) else [value] * blocks


def build(layers: Layers, config: dict, sample: dml.Expression, time_features: dml.Expression,
          context: dml.Expression, added_features: dml.Expression) -> dml.Expression:
    """The UNet's prediction [B, C, H, W] for `sample` [B, C, H, W], the timestep's sinusoidal features
    [1, 1, 1, F] (one timestep for the batch), the text context [1, 1, B * S, D] and the added features
    [1, 1, B, P] (pooled text embedding, then the six conditions' sinusoidal features)."""
    L = layers
    batch = sample.shape[0]
    channels = config["block_out_channels"]
    blocks = len(channels)
    heads = _per_block(config.get("num_attention_heads") or config["attention_head_dim"], blocks)
    depth = _per_block(config.get("transformer_layers_per_block", 1), blocks)
    per_block = config["layers_per_block"]
    eps = config.get("norm_eps", 1e-5)
    groups = config.get("norm_num_groups", 32)

    def mlp(x, name):  # linear_1, SiLU, linear_2
        return L.linear(dml.activation_swish(L.linear(x, f"{name}.linear_1")), f"{name}.linear_2")

    emb = mlp(time_features, "time_embedding")                  # [1, 1, 1, E]
    emb = dml.broadcast(emb, [1, 1, batch, emb.shape[3]]) + mlp(added_features, "add_embedding")
    emb_silu = dml.activation_swish(emb)                      # every ResNet block's time_emb_proj reads SiLU(emb)

    def resnet(x, name):
        h = L.group_norm(x, f"{name}.norm1", eps, silu=True, groups=groups)
        h = L.conv(h, f"{name}.conv1")
        t = L.linear(emb_silu, f"{name}.time_emb_proj")      # [1, 1, B, C]
        h = h + dml.broadcast(dml.reinterpret(t, [batch, h.shape[1], 1, 1]), h.shape)
        h = L.group_norm(h, f"{name}.norm2", eps, silu=True, groups=groups)
        h = L.conv(h, f"{name}.conv2")
        if L.array(f"{name}.conv_shortcut.weight") is not None:
            x = L.conv(x, f"{name}.conv_shortcut")
        return x + h

    def transformer(x, name, heads, depth):
        h = L.group_norm(x, f"{name}.norm", 1e-6, silu=False, groups=groups)
        tokens = L.linear(h, f"{name}.proj_in", image_in=True)  # [1, 1, B * HW, C]
        for i in range(depth):
            b = f"{name}.transformer_blocks.{i}"
            names = [[f"{b}.{a}.to_{p}" for p in ("q", "k", "v", "out.0")] for a in ("attn1", "attn2")]
            tokens = tokens + L.attention(L.layer_norm(tokens, f"{b}.norm1"), names[0], batch, heads)
            tokens = tokens + L.attention(L.layer_norm(tokens, f"{b}.norm2"), names[1], batch, heads,
                                          context=context)
            # GEGLU: the projection's first half times GELU of its second half, as two GEMMs (no slicing copy).
            w, bias = L.array(f"{b}.ff.net.0.proj.weight"), L.array(f"{b}.ff.net.0.proj.bias")
            inner = w.shape[0] // 2
            normed = L.layer_norm(tokens, f"{b}.norm3")
            value = L.linear(normed, weight=w[:inner], bias=bias[:inner])
            gate = L.linear(normed, weight=w[inner:], bias=bias[inner:])
            tokens = tokens + L.linear(value * dml.activation_gelu(gate), f"{b}.ff.net.2")
        return x + L.linear(tokens, f"{name}.proj_out", image_out=x.shape)

    x = L.conv(sample, "conv_in")
    skips = [x]
    for i, kind in enumerate(config["down_block_types"]):
        for j in range(per_block):
            x = resnet(x, f"down_blocks.{i}.resnets.{j}")
            if "CrossAttn" in kind:
                x = transformer(x, f"down_blocks.{i}.attentions.{j}", heads[i], depth[i])
            skips.append(x)
        if i < blocks - 1:
            x = L.conv(x, f"down_blocks.{i}.downsamplers.0.conv", stride=2)
            skips.append(x)

    x = resnet(x, "mid_block.resnets.0")
    x = transformer(x, "mid_block.attentions.0", heads[-1], depth[-1])
    x = resnet(x, "mid_block.resnets.1")

    up_heads, up_depth = heads[::-1], _per_block(config.get("reverse_transformer_layers_per_block")
                                                 or depth[::-1], blocks)
    for i, kind in enumerate(config["up_block_types"]):
        for j in range(per_block + 1):
            x = resnet(dml.join([x, skips.pop()], axis=1), f"up_blocks.{i}.resnets.{j}")
            if "CrossAttn" in kind:
                x = transformer(x, f"up_blocks.{i}.attentions.{j}", up_heads[i], up_depth[i])
        if i < blocks - 1:
            x = upsample_nearest(x, skips[-1].shape[2:])  # latents not divisible by 4 leave odd-sized skips
            x = L.conv(x, f"up_blocks.{i}.upsamplers.0.conv")

    x = L.group_norm(x, "conv_norm_out", eps, silu=True, groups=groups)
    return L.conv(x, "conv_out")
