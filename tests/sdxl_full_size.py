"""A full-size SDXL base 1.0 with random weights, written with NumPy as a diffusers folder of float16 safetensors
(the fp16 variant, sharded), for running the sample at full size where no checkpoint can be downloaded.

The configurations are SDXL base's (the settings that differ from diffusers' / transformers' defaults); the weight
names and shapes come from diffusers' and transformers' own modules built on torch's meta device (no memory), the
values from tests/sdxl_tiny.py's name-seeded generator. Each shard is written before the next is made, so writing
the ~7 GB model holds at most one shard (about a GiB) in memory. The tokenizers are CLIP's real vocabulary.

Run: python tests/sdxl_full_size.py DIR     (needs torch, diffusers, transformers, safetensors; about a minute)
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

import sdxl_tiny as tiny

# stabilityai/stable-diffusion-xl-base-1.0's configurations.
UNET = dict(sample_size=128, layers_per_block=2, block_out_channels=[320, 640, 1280],
            down_block_types=["DownBlock2D", "CrossAttnDownBlock2D", "CrossAttnDownBlock2D"],
            up_block_types=["CrossAttnUpBlock2D", "CrossAttnUpBlock2D", "UpBlock2D"],
            attention_head_dim=[5, 10, 20], transformer_layers_per_block=[1, 2, 10], cross_attention_dim=2048,
            addition_embed_type="text_time", addition_time_embed_dim=256, projection_class_embeddings_input_dim=2816,
            use_linear_projection=True, norm_num_groups=32)
VAE = dict(block_out_channels=[128, 256, 512, 512], down_block_types=["DownEncoderBlock2D"] * 4,
           up_block_types=["UpDecoderBlock2D"] * 4, layers_per_block=2, latent_channels=4, norm_num_groups=32,
           sample_size=1024, scaling_factor=0.13025, force_upcast=True)
TEXT = dict(vocab_size=49408, max_position_embeddings=77, layer_norm_eps=1e-5, bos_token_id=0, eos_token_id=2,
            pad_token_id=1, model_type="clip_text_model")
TEXT_ENCODER = dict(TEXT, hidden_size=768, intermediate_size=3072, num_hidden_layers=12, num_attention_heads=12,
                    hidden_act="quick_gelu", projection_dim=768, architectures=["CLIPTextModel"])
TEXT_ENCODER_2 = dict(TEXT, hidden_size=1280, intermediate_size=5120, num_hidden_layers=32, num_attention_heads=20,
                      hidden_act="gelu", projection_dim=1280, architectures=["CLIPTextModelWithProjection"])
CONFIGS = dict(unet=UNET, vae=VAE, text_encoder=TEXT_ENCODER, text_encoder_2=TEXT_ENCODER_2)
SHARD_BYTES = 1 << 30


def manifest(configs: dict = CONFIGS) -> dict:
    """Each component's weight names (text models' with the `text_model.` prefix) and shapes, from the modules
    built on the meta device."""
    import torch
    from diffusers import AutoencoderKL, UNet2DConditionModel
    from transformers import CLIPTextConfig, CLIPTextModel, CLIPTextModelWithProjection
    with torch.device("meta"):
        modules = dict(unet=UNet2DConditionModel(**configs["unet"]), vae=AutoencoderKL(**configs["vae"]),
                       text_encoder=CLIPTextModel(CLIPTextConfig(**configs["text_encoder"])),
                       text_encoder_2=CLIPTextModelWithProjection(CLIPTextConfig(**configs["text_encoder_2"])))
    out = {}
    for name, module in modules.items():
        shapes = {k: list(v.shape) for k, v in module.state_dict().items() if not k.endswith("position_ids")}
        if name.startswith("text_encoder"):
            shapes = {(k if k.startswith(("text_model.", "text_projection")) else "text_model." + k): s
                      for k, s in shapes.items()}
        out[name] = shapes
    return out


def write_sharded(folder: Path, stem: str, component: str, shapes: dict) -> None:
    """The component's float16 weights as {stem}.fp16-0000i-of-0000n.safetensors shards with diffusers' index."""
    from safetensors.numpy import save_file
    groups, size = [[]], 0
    for name, shape in shapes.items():
        nbytes = 2 * int(np.prod(shape))
        if groups[-1] and size + nbytes > SHARD_BYTES:
            groups.append([])
            size = 0
        groups[-1].append(name)
        size += nbytes
    weight_map = {}
    for i, names in enumerate(groups):
        file = f"{stem}.fp16-{i + 1:05d}-of-{len(groups):05d}.safetensors"
        save_file({n: tiny.weight(f"{component}.{n}", shapes[n]).astype(np.float16) for n in names},
                  str(folder / file))
        weight_map.update(dict.fromkeys(names, file))
    (folder / f"{stem}.safetensors.index.fp16.json").write_text(json.dumps(dict(metadata={}, weight_map=weight_map)))


def write_folder(root: Path, configs: dict = CONFIGS) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "model_index.json").write_text(json.dumps(tiny.MODEL_INDEX))
    (root / "scheduler").mkdir(exist_ok=True)
    (root / "scheduler" / "scheduler_config.json").write_text(json.dumps(tiny.SCHEDULER))
    for component, shapes in manifest(configs).items():
        folder = root / component
        folder.mkdir(exist_ok=True)
        (folder / "config.json").write_text(json.dumps(configs[component]))
        write_sharded(folder, "diffusion_pytorch_model" if component in ("unet", "vae") else "model", component,
                      shapes)
    for name, pad in tiny.PADDING.items():
        tiny.write_tokenizer(root / name, pad)
    return root


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("folder", type=Path)
    print(f"wrote {write_folder(p.parse_args().folder)}")


if __name__ == "__main__":
    main()
