"""A tiny SDXL-shaped model for tests: SDXL's structure at small widths, random weights made with NumPy.

Every block type is there (DownBlock2D, CrossAttnDownBlock2D, the cross-attention mid block, CrossAttnUpBlock2D,
UpBlock2D; transformer depths 1 and 2; one and two 64-wide heads), the `text_time` added conditioning, CLIP-L
(QuickGELU) and bigG (GELU, projection) text towers with CLIP's real 49408-token vocabulary, and a two-level VAE.
The names and shapes of the weights are diffusers' own (tests/data/sdxl_tiny.json, written by
tests/sdxl_reference.py from diffusers' modules); the values depend only on each name, so the model is the same
wherever it is made. It is written in two layouts: a diffusers folder and a single checkpoint file in the
original (LDM / OpenCLIP) naming, the latter by a name mapping written here independently of the sample's.
"""

from __future__ import annotations

import json
import re
import sys
import zlib
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "samples" / "sdxl"))
from tokenizer import END, fetch_vocabulary, open_clip_vocabulary  # noqa: E402

MANIFEST = Path(__file__).parent / "data" / "sdxl_tiny.json"
REFERENCE = Path(__file__).parent / "data" / "sdxl_reference.npz"  # diffusers' outputs (tests/sdxl_reference.py)
# What the reference runs: prompts (the "!!" meets bigG's "!" padding token), steps, guidance, the generator's
# seed, one UNet call's timestep, odd latent sizes (13 -> 7 -> 4 and 10 -> 5 -> 3 down the UNet: its
# upsampling must crop to the skips).
PROMPT, NEGATIVE = "a photo of an astronaut riding a horse on mars!!", "blurry, low quality"
STEPS, GUIDANCE, SEED, UNET_TIMESTEP = 2, 5.0, 7, 501.0
ODD_LATENTS = (13, 10)
# img2img: 4 steps at strength 0.6 keep the last 2; the (steps, strength) whose first kept step is checked.
IMG2IMG_STEPS, IMG2IMG_STRENGTH = 4, 0.6
IMG2IMG_STARTS = [(20, 0.3), (20, 0.75), (4, 0.6), (20, 1.0), (3, 0.5), (50, 0.99)]
VOCABULARY = 49408
HEIGHT, WIDTH = 32, 24  # the image; latents are 16 x 12 (the tiny VAE upsamples once)

UNET = dict(sample_size=16, in_channels=4, out_channels=4, layers_per_block=2, block_out_channels=[32, 64, 128],
            down_block_types=["DownBlock2D", "CrossAttnDownBlock2D", "CrossAttnDownBlock2D"],
            up_block_types=["CrossAttnUpBlock2D", "CrossAttnUpBlock2D", "UpBlock2D"],
            attention_head_dim=[1, 1, 2], transformer_layers_per_block=[1, 1, 2], cross_attention_dim=192,
            addition_embed_type="text_time", addition_time_embed_dim=256, projection_class_embeddings_input_dim=1664,
            use_linear_projection=True, norm_num_groups=32)
VAE = dict(in_channels=3, out_channels=3, latent_channels=4, block_out_channels=[32, 64], layers_per_block=1,
           down_block_types=["DownEncoderBlock2D"] * 2, up_block_types=["UpDecoderBlock2D"] * 2, norm_num_groups=32,
           sample_size=32, scaling_factor=0.13025, force_upcast=True)
TEXT = dict(vocab_size=VOCABULARY, max_position_embeddings=77, num_hidden_layers=2, layer_norm_eps=1e-5,
            bos_token_id=0, eos_token_id=2, pad_token_id=1, model_type="clip_text_model")
TEXT_ENCODER = dict(TEXT, hidden_size=64, intermediate_size=128, num_attention_heads=1, hidden_act="quick_gelu",
                    projection_dim=64, architectures=["CLIPTextModel"])
TEXT_ENCODER_2 = dict(TEXT, hidden_size=128, intermediate_size=256, num_attention_heads=2, hidden_act="gelu",
                      projection_dim=128, architectures=["CLIPTextModelWithProjection"])
SCHEDULER = dict(_class_name="EulerDiscreteScheduler", num_train_timesteps=1000, beta_start=0.00085, beta_end=0.012,
                 beta_schedule="scaled_linear", timestep_spacing="leading", steps_offset=1, prediction_type="epsilon",
                 interpolation_type="linear", use_karras_sigmas=False, clip_sample=False, sample_max_value=1.0,
                 set_alpha_to_one=False, skip_prk_steps=True)
CONFIGS = dict(unet=UNET, vae=VAE, text_encoder=TEXT_ENCODER, text_encoder_2=TEXT_ENCODER_2)
MODEL_INDEX = {"_class_name": "StableDiffusionXLPipeline", "force_zeros_for_empty_prompt": True,
               "scheduler": ["diffusers", "EulerDiscreteScheduler"],
               "text_encoder": ["transformers", "CLIPTextModel"],
               "text_encoder_2": ["transformers", "CLIPTextModelWithProjection"],
               "tokenizer": ["transformers", "CLIPTokenizer"], "tokenizer_2": ["transformers", "CLIPTokenizer"],
               "unet": ["diffusers", "UNet2DConditionModel"], "vae": ["diffusers", "AutoencoderKL"]}
PADDING = dict(tokenizer=END, tokenizer_2="!")


def weight(name: str, shape) -> np.ndarray:
    """A value for the weight `name`, from a generator seeded by the name: norm scales near 1, other vectors
    small, matrices and kernels scaled by 1 / sqrt(fan-in) so activations keep their size through the layers.
    The values are float16 numbers, so the float16 single file holds exactly the folder's float32 model."""
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    x = rng.standard_normal(shape, dtype=np.float32)
    if len(shape) == 1:
        leaf = name.rsplit(".", 2)[-2]
        x = (1 + 0.1 * x) if "norm" in leaf and name.endswith("weight") else 0.1 * x
    elif name.endswith(("token_embedding.weight", "position_embedding.weight")):
        x = 0.5 * x
    else:
        x = x / np.float32(np.sqrt(np.prod(shape[1:])))
    return x.astype(np.float16).astype(np.float32)


def weights(component: str, manifest: dict | None = None) -> dict[str, np.ndarray]:
    """The component's weights under diffusers' / transformers' names (those of `manifest`, the tiny model's
    by default)."""
    shapes = (manifest or json.loads(MANIFEST.read_text()))[component]
    return {name: weight(f"{component}.{name}", shape) for name, shape in shapes.items()}


def write_tokenizer(folder: Path, pad: str) -> None:
    vocab, merges = open_clip_vocabulary(fetch_vocabulary())
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "vocab.json").write_text(json.dumps(vocab), encoding="utf-8")
    (folder / "merges.txt").write_text("#version: 0.2\n" + "\n".join(" ".join(m) for m in merges) + "\n",
                                       encoding="utf-8")
    special = dict(bos_token="<|startoftext|>", eos_token=END, unk_token=END, pad_token=pad)
    (folder / "special_tokens_map.json").write_text(json.dumps(special))
    (folder / "tokenizer_config.json").write_text(json.dumps(dict(special, model_max_length=77,
                                                                  tokenizer_class="CLIPTokenizer")))


def write_folder(root: Path) -> Path:
    """The diffusers folder layout, float32 safetensors; CLIP-L's keys without `text_model.` (as transformers 5
    saves a CLIPTextModel), bigG's with it."""
    from safetensors.numpy import save_file
    root.mkdir(parents=True, exist_ok=True)
    (root / "model_index.json").write_text(json.dumps(MODEL_INDEX))
    (root / "scheduler").mkdir(exist_ok=True)
    (root / "scheduler" / "scheduler_config.json").write_text(json.dumps(SCHEDULER))
    for component, config in CONFIGS.items():
        (root / component).mkdir(exist_ok=True)
        (root / component / "config.json").write_text(json.dumps(config))
        tensors = weights(component)
        if component == "text_encoder":
            tensors = {n.removeprefix("text_model."): a for n, a in tensors.items()}
        stem = "diffusion_pytorch_model" if component in ("unet", "vae") else "model"
        save_file(tensors, str(root / component / f"{stem}.safetensors"))
    for name, pad in PADDING.items():
        write_tokenizer(root / name, pad)
    return root


# --- the single-file layout: diffusers' names -> the original ones -------------------------------------------------

LDM_RESNET = {"norm1": "in_layers.0", "conv1": "in_layers.2", "time_emb_proj": "emb_layers.1",
              "norm2": "out_layers.0", "conv2": "out_layers.3", "conv_shortcut": "skip_connection"}


def ldm_unet_name(name: str, per_block: int, cross: list[bool]) -> str:
    fixed = {"time_embedding.linear_1": "time_embed.0", "time_embedding.linear_2": "time_embed.2",
             "add_embedding.linear_1": "label_emb.0.0", "add_embedding.linear_2": "label_emb.0.2",
             "conv_in": "input_blocks.0.0", "conv_norm_out": "out.0", "conv_out": "out.2"}
    head, leaf = name.rsplit(".", 1)
    if head in fixed:
        return f"{fixed[head]}.{leaf}"

    def resnet(rest):
        first, _, tail = rest.partition(".")
        return f"{LDM_RESNET[first]}.{tail}"

    if m := re.match(r"mid_block\.(resnets|attentions)\.(\d)\.(.*)", name):
        index = {("resnets", "0"): 0, ("attentions", "0"): 1, ("resnets", "1"): 2}[m[1], m[2]]
        return f"middle_block.{index}.{resnet(m[3]) if m[1] == 'resnets' else m[3]}"
    if m := re.match(r"down_blocks\.(\d)\.downsamplers\.0\.conv\.(.*)", name):
        return f"input_blocks.{int(m[1]) * (per_block + 1) + per_block + 1}.0.op.{m[2]}"
    if m := re.match(r"down_blocks\.(\d)\.(resnets|attentions)\.(\d)\.(.*)", name):
        i = int(m[1]) * (per_block + 1) + int(m[3]) + 1
        return f"input_blocks.{i}.0.{resnet(m[4])}" if m[2] == "resnets" else f"input_blocks.{i}.1.{m[4]}"
    if m := re.match(r"up_blocks\.(\d)\.upsamplers\.0\.(.*)", name):
        return f"output_blocks.{int(m[1]) * (per_block + 1) + per_block}.{2 if cross[int(m[1])] else 1}.{m[2]}"
    if m := re.match(r"up_blocks\.(\d)\.(resnets|attentions)\.(\d)\.(.*)", name):
        i = int(m[1]) * (per_block + 1) + int(m[3])
        return f"output_blocks.{i}.0.{resnet(m[4])}" if m[2] == "resnets" else f"output_blocks.{i}.1.{m[4]}"
    raise KeyError(name)


def ldm_vae_name(name: str, blocks: int) -> str:
    attention = {"to_q": "q", "to_k": "k", "to_v": "v", "to_out.0": "proj_out", "group_norm": "norm"}

    def resnet(rest):
        return rest.replace("conv_shortcut", "nin_shortcut")

    if m := re.match(r"(encoder|decoder)\.mid_block\.resnets\.(\d)\.(.*)", name):
        return f"{m[1]}.mid.block_{int(m[2]) + 1}.{resnet(m[3])}"
    if m := re.match(r"(encoder|decoder)\.mid_block\.attentions\.0\.(.*)\.(weight|bias)", name):
        return f"{m[1]}.mid.attn_1.{attention[m[2]]}.{m[3]}"
    if m := re.match(r"decoder\.up_blocks\.(\d)\.resnets\.(\d)\.(.*)", name):
        return f"decoder.up.{blocks - 1 - int(m[1])}.block.{m[2]}.{resnet(m[3])}"
    if m := re.match(r"decoder\.up_blocks\.(\d)\.upsamplers\.0\.(.*)", name):
        return f"decoder.up.{blocks - 1 - int(m[1])}.upsample.{m[2]}"
    if m := re.match(r"encoder\.down_blocks\.(\d)\.resnets\.(\d)\.(.*)", name):
        return f"encoder.down.{m[1]}.block.{m[2]}.{resnet(m[3])}"
    if m := re.match(r"encoder\.down_blocks\.(\d)\.downsamplers\.0\.(.*)", name):
        return f"encoder.down.{m[1]}.downsample.{m[2]}"
    return name.replace(".conv_norm_out.", ".norm_out.")


def open_clip_tensors(tensors: dict) -> dict:
    """bigG in OpenCLIP's naming: q, k and v fused as in_proj, text_projection stored [D, P]."""
    out = {"token_embedding.weight": tensors["text_model.embeddings.token_embedding.weight"],
           "positional_embedding": tensors["text_model.embeddings.position_embedding.weight"],
           "ln_final.weight": tensors["text_model.final_layer_norm.weight"],
           "ln_final.bias": tensors["text_model.final_layer_norm.bias"],
           "text_projection": np.ascontiguousarray(tensors["text_projection.weight"].T)}
    names = {"layer_norm1": "ln_1", "layer_norm2": "ln_2", "self_attn.out_proj": "attn.out_proj",
             "mlp.fc1": "mlp.c_fc", "mlp.fc2": "mlp.c_proj"}
    layers = {int(m[1]) for n in tensors if (m := re.match(r"text_model\.encoder\.layers\.(\d+)\.", n))}
    for i in layers:
        p = f"text_model.encoder.layers.{i}"
        for kind in ("weight", "bias"):
            out[f"transformer.resblocks.{i}.attn.in_proj_{kind}"] = np.concatenate(
                [tensors[f"{p}.self_attn.{q}_proj.{kind}"] for q in "qkv"])
            for new, old in names.items():
                out[f"transformer.resblocks.{i}.{old}.{kind}"] = tensors[f"{p}.{new}.{kind}"]
    return out


def write_single_file(path: Path, configs: dict = CONFIGS, manifest: dict | None = None) -> Path:
    """One checkpoint in the ComfyUI / A1111 layout, float16 (as such files usually are): the tiny model, or the
    one `configs` and `manifest` describe."""
    from safetensors.numpy import save_file
    unet, vae = configs["unet"], configs["vae"]
    per_block, blocks = unet["layers_per_block"], len(vae["block_out_channels"])
    cross = ["CrossAttn" in t for t in unet["up_block_types"]]
    out = {}

    def half(a):
        return np.ascontiguousarray(a, np.float16)

    for name, a in weights("unet", manifest).items():
        out["model.diffusion_model." + ldm_unet_name(name, per_block, cross)] = half(a)
    for name, a in weights("vae", manifest).items():
        new = ldm_vae_name(name, blocks)
        a = a.reshape(*a.shape, 1, 1) if ".mid.attn_1." in new and a.ndim == 2 else a
        out["first_stage_model." + new] = half(a)
    for name, a in weights("text_encoder", manifest).items():
        out["conditioner.embedders.0.transformer." + name] = half(a)
    for name, a in open_clip_tensors(weights("text_encoder_2", manifest)).items():
        out["conditioner.embedders.1.model." + name] = half(a)
    save_file(out, str(path))
    return path
