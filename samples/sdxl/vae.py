"""SDXL's VAE (diffusers' AutoencoderKL) as DirectML operators: the decoder, and the encoder img2img starts from.

decode: latents / scaling_factor; post_quant_conv; conv_in; a middle ResNet / single-head self-attention /
ResNet; up blocks of ResNet blocks with nearest-neighbour 2x + convolution between them; GroupNorm + SiLU +
conv_out; then (x + 1) / 2 clipped to [0, 1].
encode: an image in [-1, 1]; conv_in; down blocks of ResNet blocks with a stride-2 convolution (padded by one
pixel after, none before) between them; the same middle; GroupNorm + SiLU + conv_out; quant_conv: the
posterior's mean and log-variance, side by side on the channels.

SDXL's VAE overflows float16 with its real weights: its residual stream grows past 65504. But every path out of
that stream starts with a GroupNorm, which does not see a scale (given epsilon scaled by its square), or with a
convolution into the stream again (an up- or downsampler); and every path into it ends in a convolution or a
linear layer. So both halves can carry the stream multiplied by `activation_scale` (e.g. 1/32 in float16): the
convolutions that write into it get their weights (if their input is not the stream itself) and biases
multiplied by it, the GroupNorms reading it get epsilon * scale^2, and conv_out, after the last GroupNorm, sees
the unscaled values. In exact arithmetic this is the same function.
"""

from __future__ import annotations

import directml as dml
from layers import Layers, upsample_nearest

EPS = 1e-6


class _Stream:
    """The layers both halves share, on a residual stream scaled by `scale`."""

    def __init__(self, layers: Layers, config: dict, scale: float):
        self.L, self.s, self.groups = layers, scale, config.get("norm_num_groups", 32)

    def norm(self, x, name):  # x is the (scaled) stream, or a scaled convolution's output
        return self.L.group_norm(x, name, EPS * self.s * self.s, silu=True, groups=self.groups)

    def into(self, x, name, **conv):  # a convolution from outside the stream (weight scaled) into it
        return self.L.conv(x, name, weight_scale=self.s, bias_scale=self.s, **conv)

    def along(self, x, name, **conv):  # a convolution from the stream into it (its input carries the scale)
        return self.L.conv(x, name, bias_scale=self.s, **conv)

    def resnet(self, x, name):
        h = self.into(self.norm(x, f"{name}.norm1"), f"{name}.conv1")
        h = self.into(self.norm(h, f"{name}.norm2"), f"{name}.conv2")
        if self.L.array(f"{name}.conv_shortcut.weight") is not None:
            x = self.along(x, f"{name}.conv_shortcut")
        return x + h

    def middle(self, x, prefix):
        x = self.resnet(x, f"{prefix}.mid_block.resnets.0")
        h = self.L.group_norm(x, f"{prefix}.mid_block.attentions.0.group_norm", EPS * self.s * self.s, silu=False,
                              groups=self.groups)
        names = [f"{prefix}.mid_block.attentions.0.to_{p}" for p in ("q", "k", "v", "out.0")]
        x = x + self.L.attention(h, names, batch=x.shape[0], heads=1, image=True, output_scale=self.s)
        return self.resnet(x, f"{prefix}.mid_block.resnets.1")

    def out(self, x, prefix):  # leaves the stream: unscaled
        return self.L.conv(self.norm(x, f"{prefix}.conv_norm_out"), f"{prefix}.conv_out")


def build(layers: Layers, config: dict, latents: dml.Expression, activation_scale: float = 1.0) -> dml.Expression:
    """The image [N, 3, 8H, 8W] in [0, 1] (for SDXL's four blocks) from latents [N, 4, H, W]."""
    v = _Stream(layers, config, activation_scale)
    blocks = len(config["block_out_channels"])
    x = layers.conv(latents * (1.0 / config.get("scaling_factor", 0.13025)), "post_quant_conv")
    x = v.middle(v.into(x, "decoder.conv_in"), "decoder")
    for i in range(blocks):
        for j in range(config["layers_per_block"] + 1):
            x = v.resnet(x, f"decoder.up_blocks.{i}.resnets.{j}")
        if i < blocks - 1:
            x = v.along(upsample_nearest(x), f"decoder.up_blocks.{i}.upsamplers.0.conv")
    return dml.clip(v.out(x, "decoder") * 0.5 + 0.5, min=0.0, max=1.0)


def encode(layers: Layers, config: dict, image: dml.Expression, activation_scale: float = 1.0) -> dml.Expression:
    """The posterior's moments [N, 2 * 4, H / 8, W / 8] (mean, then log-variance; before scaling_factor) of an
    image [N, 3, H, W] in [-1, 1]."""
    v = _Stream(layers, config, activation_scale)
    blocks = len(config["block_out_channels"])
    x = v.into(image, "encoder.conv_in")
    for i in range(blocks):
        for j in range(config["layers_per_block"]):
            x = v.resnet(x, f"encoder.down_blocks.{i}.resnets.{j}")
        if i < blocks - 1:
            x = v.along(x, f"encoder.down_blocks.{i}.downsamplers.0.conv", stride=2, padding=(0, 1))
    return layers.conv(v.out(v.middle(x, "encoder"), "encoder"), "quant_conv")
