"""SDXL's VAE decoder (diffusers' AutoencoderKL.decode) as DirectML operators.

latents / scaling_factor; post_quant_conv; conv_in; a middle ResNet / single-head self-attention / ResNet;
up blocks of ResNet blocks with nearest-neighbour 2x + convolution between them; GroupNorm + SiLU + conv_out;
then (x + 1) / 2 clipped to [0, 1].

SDXL's VAE overflows float16 with its real weights: its residual stream grows past 65504. But every path out of
that stream starts with a GroupNorm, which does not see a scale (given epsilon scaled by its square), and every
path into it ends in a convolution or a linear layer. So the decoder can carry the stream multiplied by
`activation_scale` (e.g. 1/32 in float16): the convolutions that write into it get their weights (if their input
is not the stream itself) and biases multiplied by it, the GroupNorms reading it get epsilon * scale^2, and
conv_out, after the last GroupNorm, sees the unscaled values. In exact arithmetic this is the same function.
"""

from __future__ import annotations

import directml as dml
from layers import Layers, upsample_nearest

EPS = 1e-6


def build(layers: Layers, config: dict, latents: dml.Expression, activation_scale: float = 1.0) -> dml.Expression:
    """The image [N, 3, 8H, 8W] in [0, 1] (for SDXL's four blocks) from latents [N, 4, H, W]."""
    L = layers
    s = activation_scale
    groups = config.get("norm_num_groups", 32)
    blocks = len(config["block_out_channels"])

    def norm(x, name):  # x is the (scaled) stream, or a scaled convolution's output
        return L.group_norm(x, name, EPS * s * s, silu=True, groups=groups)

    def resnet(x, name):
        h = L.conv(norm(x, f"{name}.norm1"), f"{name}.conv1", weight_scale=s, bias_scale=s)
        h = L.conv(norm(h, f"{name}.norm2"), f"{name}.conv2", weight_scale=s, bias_scale=s)
        if L.array(f"{name}.conv_shortcut.weight") is not None:
            x = L.conv(x, f"{name}.conv_shortcut", bias_scale=s)
        return x + h

    x = L.conv(latents * (1.0 / config.get("scaling_factor", 0.13025)), "post_quant_conv")
    x = L.conv(x, "decoder.conv_in", weight_scale=s, bias_scale=s)
    x = resnet(x, "decoder.mid_block.resnets.0")
    h = L.group_norm(x, "decoder.mid_block.attentions.0.group_norm", EPS * s * s, silu=False, groups=groups)
    names = [f"decoder.mid_block.attentions.0.to_{p}" for p in ("q", "k", "v", "out.0")]
    x = x + L.attention(h, names, batch=x.shape[0], heads=1, image=True, output_scale=s)
    x = resnet(x, "decoder.mid_block.resnets.1")
    for i in range(blocks):
        for j in range(config["layers_per_block"] + 1):
            x = resnet(x, f"decoder.up_blocks.{i}.resnets.{j}")
        if i < blocks - 1:
            x = L.conv(upsample_nearest(x), f"decoder.up_blocks.{i}.upsamplers.0.conv", bias_scale=s)
    x = L.conv(norm(x, "decoder.conv_norm_out"), "decoder.conv_out")
    return dml.clip(x * 0.5 + 0.5, min=0.0, max=1.0)
