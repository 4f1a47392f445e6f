"""SDXL's weights as users have them, opened and checked by `safetensors` and read memory-mapped, under diffusers'
names.

Two layouts:
- a diffusers folder: model_index.json, unet/, vae/, text_encoder/, text_encoder_2/ (each a config.json and
  a *.safetensors file, the *.fp16.safetensors variant preferred, or shards with an index), tokenizer/ and
  tokenizer_2/ (vocab.json, merges.txt), scheduler/;
- a single checkpoint file (ComfyUI / A1111): model.diffusion_model.* (the UNet in the original LDM naming),
  first_stage_model.* (the VAE), conditioner.embedders.0.transformer.* (CLIP-L, transformers' naming) and
  conditioner.embedders.1.model.* (OpenCLIP bigG's own naming). Its names are mapped to diffusers' names here,
  and its configurations are read off the tensors' shapes (with SDXL's fixed 64-wide attention heads).
"""

from __future__ import annotations

import json
import math
import mmap
import re
from collections.abc import Mapping
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from safetensors import safe_open

from tokenizer import ClipTokenizer

# SDXL base's scheduler (diffusers' EulerDiscreteScheduler configuration in the base model's folder).
SCHEDULER_DEFAULTS = dict(num_train_timesteps=1000, beta_start=0.00085, beta_end=0.012, beta_schedule="scaled_linear",
                          timestep_spacing="leading", steps_offset=1, prediction_type="epsilon")
HEAD_SIZE = 64  # SDXL's attention heads are 64 wide in the UNet and both text encoders


class Tensors(Mapping):
    """name -> NumPy array, read on access from safetensors files. `names` maps each name to (file path, name in
    the file, a function applied to the array or None). An array without a function is a read-only view of the
    file's memory map (SafetensorsFile): a read copies nothing, and the file stays mapped while such an array is
    alive (the graphs lend them as constants: clean file pages, which the kernel can drop and read again, rather
    than a second copy of a full SDXL's 7 GB in the process's own memory)."""

    def __init__(self, names: dict):
        self.names = names
        self._files: dict | None = None  # path -> SafetensorsFile, inside held()

    @contextmanager
    def held(self):
        """Keeps each file open from its first read to the end of the block: a network's build reads thousands of
        tensors, and each opening parses the file's whole header (SDXL's UNet: 10 s of 2 ms openings)."""
        if self._files is not None:  # an enclosing block holds them already
            yield self
            return
        self._files = {}
        try:
            yield self
        finally:
            self._files = None

    def _file(self, path: Path) -> SafetensorsFile:
        if self._files is None:
            return SafetensorsFile(path)
        if path not in self._files:
            self._files[path] = SafetensorsFile(path)
        return self._files[path]

    def __getitem__(self, name):
        path, stored, transform = self.names[name]
        array = self._file(path).tensor(stored)
        return array if transform is None else transform(array)

    def __contains__(self, name):  # Mapping's own would read the tensor
        return name in self.names

    def __iter__(self):
        return iter(self.names)

    def __len__(self):
        return len(self.names)

    def shape(self, name) -> tuple:
        path, stored, transform = self.names[name]
        if transform is None:
            return self._file(path).layout[stored][2]
        return self[name].shape


# safetensors' type names -> NumPy's, little-endian as the format stores them (NumPy has no bfloat16: such a file is
# refused by name).
SAFETENSORS_DTYPES = {"F64": "<f8", "F32": "<f4", "F16": "<f2", "I64": "<i8", "I32": "<i4", "I16": "<i2", "I8": "i1",
                      "U64": "<u8", "U32": "<u4", "U16": "<u2", "U8": "u1", "BOOL": "?"}


class SafetensorsFile:
    """One .safetensors file. The `safetensors` library opens it and checks it: the header, every tensor's type and
    shape, and that the tensors fill the data block after the header in the order of their offsets, without holes.
    So each tensor's bytes lie at the end of the file, at the sum of the sizes before it: its array is a view of a
    read-only memory map of the file. (The library's own NumPy reads copy every tensor into new memory, whose first
    touch cost SDXL's UNet about 2 s on the H200's host.)"""

    def __init__(self, path: Path):
        self.layout = {}  # name -> (offset in the data block, dtype, shape)
        offset = 0
        with safe_open(str(path), framework="np") as handle:
            for name in handle.offset_keys():
                view = handle.get_slice(name)
                kind, shape = view.get_dtype(), tuple(view.get_shape())
                if kind not in SAFETENSORS_DTYPES:
                    raise ValueError(f"{path}: tensor {name!r} is {kind}, which NumPy cannot hold (supported: "
                                     f"{', '.join(SAFETENSORS_DTYPES)})")
                dtype = np.dtype(SAFETENSORS_DTYPES[kind])
                self.layout[name] = (offset, dtype, shape)
                offset += dtype.itemsize * math.prod(shape)
        with open(path, "rb") as f:
            self.bytes = np.frombuffer(mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ), np.uint8)
        self.data_start = len(self.bytes) - offset
        header = 8 + int.from_bytes(self.bytes[:8].tobytes(), "little")  # the header's length, then the header
        if self.data_start != header:
            raise ValueError(f"{path}: its tensors do not fill the data after its header ({offset} bytes of tensors, "
                             f"{len(self.bytes) - header} of data)")

    def tensor(self, name) -> np.ndarray:
        offset, dtype, shape = self.layout[name]
        start = self.data_start + offset
        return self.bytes[start:start + dtype.itemsize * math.prod(shape)].view(dtype).reshape(shape)


@dataclass
class Component:
    weights: Tensors
    config: dict


@dataclass
class Model:
    """Everything SDXL needs, whatever the layout it came in."""
    text_encoder: Component
    text_encoder_2: Component
    unet: Component
    vae: Component
    tokenizer: ClipTokenizer
    tokenizer_2: ClipTokenizer
    scheduler: dict = field(default_factory=lambda: dict(SCHEDULER_DEFAULTS))

    @contextmanager
    def held(self):
        """Every component's files stay mapped from their first read to the end of the block (Tensors.held): the
        pipeline holds them while it builds a graph, and lets go before the graph compiles."""
        with ExitStack() as stack:
            for part in (self.text_encoder, self.text_encoder_2, self.unet, self.vae):
                stack.enter_context(part.weights.held())
            yield self


def _files(folder: Path) -> list[Path]:
    """The safetensors file(s) of a component folder: the fp16 variant if there is one; shards by their index."""
    for variant in (".fp16", ""):
        for stem in ("diffusion_pytorch_model", "model"):
            single = folder / f"{stem}{variant}.safetensors"
            if single.exists():
                return [single]
            index = folder / f"{stem}.safetensors.index{variant}.json"
            if index.exists():
                shards = sorted(set(json.loads(index.read_text())["weight_map"].values()))
                return [folder / s for s in shards]
    raise FileNotFoundError(f"no *.safetensors weights in {folder}")


def _keys(path: Path) -> list[str]:
    """The tensor names in a file, from its header alone (nothing mapped, no layout computed)."""
    with safe_open(str(path), framework="np") as handle:
        return list(handle.keys())


def _tensors(files: list[Path], rename=lambda name: name) -> Tensors:
    names = {}
    for path in files:
        for key in _keys(path):
            if (new := rename(key)) is not None:
                names[new] = (path, key, None)
    return Tensors(names)


def _text_model_name(key: str) -> str:
    """transformers' CLIP text models save their keys with or without the `text_model.` prefix."""
    return key if key.startswith(("text_model.", "text_projection")) else "text_model." + key


def load(path: str | Path) -> Model:
    """The model in a diffusers folder or a single .safetensors checkpoint."""
    path = Path(path)
    return load_folder(path) if path.is_dir() else load_single_file(path)


def load_folder(folder: Path) -> Model:
    def component(name, rename=lambda k: k):
        return Component(_tensors(_files(folder / name), rename),
                         json.loads((folder / name / "config.json").read_text()))

    scheduler = dict(SCHEDULER_DEFAULTS)
    scheduler_file = folder / "scheduler" / "scheduler_config.json"
    if scheduler_file.exists():
        scheduler.update(json.loads(scheduler_file.read_text()))
    return Model(text_encoder=component("text_encoder", _text_model_name),
                 text_encoder_2=component("text_encoder_2", _text_model_name),
                 unet=component("unet"), vae=component("vae"),
                 tokenizer=ClipTokenizer.from_folder(folder / "tokenizer"),
                 tokenizer_2=ClipTokenizer.from_folder(folder / "tokenizer_2"),
                 scheduler=scheduler)


# --- the single-file layout ---------------------------------------------------------------------------------------

UNET_PREFIX, VAE_PREFIX = "model.diffusion_model.", "first_stage_model."
CLIP_L_PREFIX, CLIP_G_PREFIX = "conditioner.embedders.0.transformer.", "conditioner.embedders.1.model."

# LDM's ResNet block names -> diffusers' (UNet: in_layers / emb_layers / out_layers; VAE: as diffusers, nearly).
RESNET_NAMES = {"in_layers.0": "norm1", "in_layers.2": "conv1", "emb_layers.1": "time_emb_proj",
                "out_layers.0": "norm2", "out_layers.3": "conv2", "skip_connection": "conv_shortcut",
                "nin_shortcut": "conv_shortcut"}
UNET_NAMES = {"time_embed.0": "time_embedding.linear_1", "time_embed.2": "time_embedding.linear_2",
              "label_emb.0.0": "add_embedding.linear_1", "label_emb.0.2": "add_embedding.linear_2",
              "input_blocks.0.0": "conv_in", "out.0": "conv_norm_out", "out.2": "conv_out",
              "middle_block.0": "mid_block.resnets.0", "middle_block.1": "mid_block.attentions.0",
              "middle_block.2": "mid_block.resnets.1"}
VAE_ATTENTION_NAMES = {"q": "to_q", "k": "to_k", "v": "to_v", "proj_out": "to_out.0", "norm": "group_norm"}


def _resnet(rest: str) -> str:
    for old, new in RESNET_NAMES.items():
        if rest.startswith(old + "."):
            return new + rest[len(old):]
    return rest


def _unet_name(key: str, per_block: int, upsampler_at: dict) -> str | None:
    """diffusers' name for one LDM UNet name (without the model.diffusion_model. prefix)."""
    for old, new in UNET_NAMES.items():
        if key.startswith(old + "."):
            rest = key[len(old) + 1:]
            return f"{new}.{_resnet(rest) if 'resnets' in new else rest}"
    if m := re.match(r"input_blocks\.(\d+)\.(\d)\.(.*)", key):
        i, part, rest = int(m[1]), int(m[2]), m[3]
        block, layer = (i - 1) // (per_block + 1), (i - 1) % (per_block + 1)
        if layer == per_block:  # the block's downsampler: input_blocks.i.0.op
            return f"down_blocks.{block}.downsamplers.0.conv.{rest.removeprefix('op.')}"
        return f"down_blocks.{block}.{'resnets' if part == 0 else 'attentions'}.{layer}." + (
            _resnet(rest) if part == 0 else rest)
    if m := re.match(r"output_blocks\.(\d+)\.(\d)\.(.*)", key):
        i, part, rest = int(m[1]), int(m[2]), m[3]
        block, layer = i // (per_block + 1), i % (per_block + 1)
        if part == upsampler_at.get(i):
            return f"up_blocks.{block}.upsamplers.0.{rest}"
        return f"up_blocks.{block}.{'resnets' if part == 0 else 'attentions'}.{layer}." + (
            _resnet(rest) if part == 0 else rest)
    return None


def _vae_name(key: str, blocks: int) -> str | None:
    """diffusers' name for one LDM VAE name (without first_stage_model.); the decoder's up blocks run in the
    opposite order in diffusers, the encoder's down blocks in the same."""
    if not key.startswith(("encoder.", "decoder.", "quant_conv.", "post_quant_conv.")):
        return None
    half, rest = key.split(".", 1)
    rest = rest.replace("norm_out.", "conv_norm_out.", 1) if rest.startswith("norm_out.") else rest
    if m := re.match(r"mid\.block_(\d)\.(.*)", rest):
        return f"{half}.mid_block.resnets.{int(m[1]) - 1}.{_resnet(m[2])}"
    if m := re.match(r"mid\.attn_1\.(\w+)\.(.*)", rest):
        return f"{half}.mid_block.attentions.0.{VAE_ATTENTION_NAMES[m[1]]}.{m[2]}"
    if m := re.match(r"(up|down)\.(\d+)\.block\.(\d+)\.(.*)", rest):
        block = blocks - 1 - int(m[2]) if m[1] == "up" else int(m[2])
        return f"{half}.{m[1]}_blocks.{block}.resnets.{m[3]}.{_resnet(m[4])}"
    if m := re.match(r"(up|down)\.(\d+)\.(upsample|downsample)\.(.*)", rest):
        block = blocks - 1 - int(m[2]) if m[1] == "up" else int(m[2])
        return f"{half}.{m[1]}_blocks.{block}.{m[3]}rs.0.{m[4]}"
    return f"{half}.{rest}"


def _open_clip_names(path: Path, keys: list[str]) -> dict:
    """OpenCLIP's text tower names -> transformers' CLIP names; its fused in_proj splits into q, k, v."""
    names = {}
    simple = {"token_embedding.weight": "text_model.embeddings.token_embedding.weight",
              "positional_embedding": "text_model.embeddings.position_embedding.weight",
              "ln_final.weight": "text_model.final_layer_norm.weight",
              "ln_final.bias": "text_model.final_layer_norm.bias"}
    layer = {"ln_1": "layer_norm1", "ln_2": "layer_norm2", "attn.out_proj": "self_attn.out_proj",
             "mlp.c_fc": "mlp.fc1", "mlp.c_proj": "mlp.fc2"}
    for key in keys:
        rest = key[len(CLIP_G_PREFIX):]
        if rest in simple:
            names[simple[rest]] = (path, key, None)
        elif rest == "text_projection":  # stored [D, P] to be multiplied from the right: transformers' is [P, D]
            names["text_projection.weight"] = (path, key, lambda a: a.T)
        elif m := re.match(r"transformer\.resblocks\.(\d+)\.(.*)[._](weight|bias)$", rest):
            p = f"text_model.encoder.layers.{m[1]}"
            if m[2] == "attn.in_proj":
                for i, q in enumerate("qkv"):
                    names[f"{p}.self_attn.{q}_proj.{m[3]}"] = (path, key, lambda a, i=i: a[i * len(a) // 3:
                                                                                          (i + 1) * len(a) // 3])
            elif m[2] in layer:
                names[f"{p}.{layer[m[2]]}.{m[3]}"] = (path, key, None)
    return names


def _count(weights: Tensors, pattern: str) -> int:
    """How many distinct values the (\\d+) group of `pattern` takes among the names."""
    return len({m[1] for name in weights if (m := re.match(pattern, name))})


def _text_config(weights: Tensors, activation: str) -> dict:
    hidden = weights.shape("text_model.embeddings.token_embedding.weight")[1]
    return dict(hidden_size=hidden, num_attention_heads=hidden // HEAD_SIZE, hidden_act=activation,
                num_hidden_layers=_count(weights, r"text_model\.encoder\.layers\.(\d+)\."), layer_norm_eps=1e-5)


def _unet_config(weights: Tensors) -> dict:
    blocks = _count(weights, r"down_blocks\.(\d+)\.")
    channels = [weights.shape(f"down_blocks.{i}.resnets.0.conv1.weight")[0] for i in range(blocks)]
    cross = [f"down_blocks.{i}.attentions.0.proj_in.weight" in weights for i in range(blocks)]
    up_cross = [f"up_blocks.{i}.attentions.0.proj_in.weight" in weights for i in range(blocks)]
    return dict(block_out_channels=channels, layers_per_block=_count(weights, r"down_blocks\.0\.resnets\.(\d+)\."),
                attention_head_dim=[max(1, c // HEAD_SIZE) for c in channels],
                transformer_layers_per_block=[
                    _count(weights, rf"down_blocks\.{i}\.attentions\.0\.transformer_blocks\.(\d+)\.") or 1
                    for i in range(blocks)],
                down_block_types=["CrossAttnDownBlock2D" if c else "DownBlock2D" for c in cross],
                up_block_types=["CrossAttnUpBlock2D" if c else "UpBlock2D" for c in up_cross],
                addition_time_embed_dim=256, norm_num_groups=32, norm_eps=1e-5, flip_sin_to_cos=True, freq_shift=0)


def load_single_file(path: Path) -> Model:
    keys = _keys(path)
    unet_keys = [k[len(UNET_PREFIX):] for k in keys if k.startswith(UNET_PREFIX)]
    # Down block b is input_blocks (per_block + 1) b + 1 ...: per_block ResNet blocks (each with its attention,
    # if any), then its downsampler (input_blocks.i.0.op). The first downsampler's index gives per_block.
    per_block = min(int(m[1]) for k in unet_keys if (m := re.match(r"input_blocks\.(\d+)\.0\.op\.", k))) - 1
    # An up block's upsampler is output_blocks.i.1.conv (no attention) or output_blocks.i.2.conv.
    upsampler_at = {int(m[1]): int(m[2]) for k in unet_keys
                    if (m := re.match(r"output_blocks\.(\d+)\.(\d)\.conv\.weight$", k))}
    unet = Tensors({n: (path, UNET_PREFIX + k, None) for k in unet_keys
                    if (n := _unet_name(k, per_block, upsampler_at)) is not None})

    vae_keys = [k[len(VAE_PREFIX):] for k in keys if k.startswith(VAE_PREFIX)]
    vae_blocks = len({m[1] for k in vae_keys if (m := re.match(r"decoder\.up\.(\d+)\.", k))})
    vae = Tensors({n: (path, VAE_PREFIX + k, None) for k in vae_keys if (n := _vae_name(k, vae_blocks)) is not None})
    vae_config = dict(block_out_channels=[vae.shape(f"decoder.up_blocks.{i}.resnets.0.conv1.weight")[0]
                                          for i in range(vae_blocks)][::-1],
                      layers_per_block=_count(vae, r"decoder\.up_blocks\.0\.resnets\.(\d+)\.") - 1,
                      norm_num_groups=32, scaling_factor=0.13025)

    clip_l = Tensors({_text_model_name(k[len(CLIP_L_PREFIX):]): (path, k, None) for k in keys
                      if k.startswith(CLIP_L_PREFIX) and not k.endswith("position_ids")})
    clip_g = Tensors(_open_clip_names(path, [k for k in keys if k.startswith(CLIP_G_PREFIX)]))
    tokenizer = ClipTokenizer.from_open_clip_vocabulary
    return Model(text_encoder=Component(clip_l, _text_config(clip_l, "quick_gelu")),
                 text_encoder_2=Component(clip_g, _text_config(clip_g, "gelu")),
                 unet=Component(unet, _unet_config(unet)), vae=Component(vae, vae_config),
                 tokenizer=tokenizer(pad_token="<|endoftext|>"), tokenizer_2=tokenizer(pad_token="!"))
