"""SDXL's VAE decoder (diffusers' AutoencoderKL.decode) as DirectML operators.

latents / scaling_factor; post_quant_conv; conv_in; a middle ResNet / single-head self-attention / ResNet;
up blocks of ResNet blocks with nearest-neighbour 2x + convolution between them; GroupNorm + SiLU + conv_out;
then (x + 1) / 2 clipped to [0, 1]. SDXL's VAE overflows float16 with its real weights: build it in float32.
"""

from __future__ import annotations

import directml as dml
from layers import Layers, upsample_nearest

EPS = 1e-6


def build(layers: Layers, config: dict, latents: dml.Expression) -> dml.Expression:
    """The image [N, 3, 8H, 8W] in [0, 1] (for SDXL's four blocks) from latents [N, 4, H, W]."""
    L = layers
    groups = config.get("norm_num_groups", 32)
    blocks = len(config["block_out_channels"])

    def resnet(x, name):
        h = L.conv(L.group_norm(x, f"{name}.norm1", EPS, silu=True, groups=groups), f"{name}.conv1")
        h = L.conv(L.group_norm(h, f"{name}.norm2", EPS, silu=True, groups=groups), f"{name}.conv2")
        if L.array(f"{name}.conv_shortcut.weight") is not None:
            x = L.conv(x, f"{name}.conv_shortcut")
        return x + h

    x = L.conv(latents * (1.0 / config.get("scaling_factor", 0.13025)), "post_quant_conv")
    x = L.conv(x, "decoder.conv_in")
    x = resnet(x, "decoder.mid_block.resnets.0")
    h = L.group_norm(x, "decoder.mid_block.attentions.0.group_norm", EPS, silu=False, groups=groups)
    names = [f"decoder.mid_block.attentions.0.to_{p}" for p in ("q", "k", "v", "out.0")]
    x = x + L.attention(h, names, batch=x.shape[0], heads=1, image=True)
    x = resnet(x, "decoder.mid_block.resnets.1")
    for i in range(blocks):
        for j in range(config["layers_per_block"] + 1):
            x = resnet(x, f"decoder.up_blocks.{i}.resnets.{j}")
        if i < blocks - 1:
            x = upsample_nearest(x)
            x = L.conv(x, f"decoder.up_blocks.{i}.upsamplers.0.conv")
    x = L.group_norm(x, "decoder.conv_norm_out", EPS, silu=True, groups=groups)
    x = L.conv(x, "decoder.conv_out")
    return dml.clip(x * 0.5 + 0.5, min=0.0, max=1.0)
