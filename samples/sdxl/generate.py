"""Text to image with Stable Diffusion XL, written with nothing but directml's operators.

Run: python samples/sdxl/generate.py "a prompt" --model DIR_OR_FILE [--negative ""] [--size 1024] [--steps 20]
         [--guidance 5.0] [--seed 0] [--device cpu|cuda|directml] [--output image.png] [--vae-dtype float16]
--model is a diffusers folder (stabilityai/stable-diffusion-xl-base-1.0's layout) or a single .safetensors
checkpoint (ComfyUI / A1111's). --size is WIDTH or WIDTHxHEIGHT, multiples of 8. See samples/sdxl/README.md.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import directml as dml  # noqa: E402
from pipeline import EulerDiscrete, Pipeline  # noqa: E402
from weights import load  # noqa: E402


def image_size(text: str) -> tuple[int, int]:
    """'1024' or '1152x896' -> (width, height)."""
    parts = text.lower().split("x")
    if len(parts) not in (1, 2) or not all(p.isdigit() and int(p) > 0 and int(p) % 8 == 0 for p in parts):
        raise argparse.ArgumentTypeError(f"--size takes WIDTH or WIDTHxHEIGHT in multiples of 8, got {text!r}")
    return int(parts[0]), int(parts[-1])


def progress(i: int, total: int, start: float) -> None:
    done = (i + 1) * 30 // total
    elapsed = time.perf_counter() - start
    print(f"\r  [{'#' * done}{'.' * (30 - done)}] {i + 1}/{total} steps, {elapsed:.2f} s", end="", file=sys.stderr,
          flush=True)
    if i + 1 == total:
        print(file=sys.stderr)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("prompt")
    p.add_argument("--model", required=True, type=Path, help="a diffusers folder or a single .safetensors file")
    p.add_argument("--negative", default="", help="the negative prompt (empty: zeros, as diffusers does)")
    p.add_argument("--size", default=(1024, 1024), type=image_size, help="WIDTH or WIDTHxHEIGHT (default 1024)")
    p.add_argument("--steps", default=20, type=int)
    p.add_argument("--guidance", default=5.0, type=float)
    p.add_argument("--seed", default=0, type=int)
    p.add_argument("--device", default=None, help="cpu, cuda or directml (default: the best here)")
    p.add_argument("--output", default=Path("image.png"), type=Path)
    p.add_argument("--vae-dtype", default="float16", choices=["float16", "float32"],
                   help="the VAE's precision (float16: activations scaled to stay in range; see vae.py)")
    args = p.parse_args()
    from PIL import Image

    times = {}
    start = time.perf_counter()
    model = load(args.model)
    device = dml.Device(args.device)
    width, height = args.size
    print(f"{device.kind} ({device.name}): {width}x{height}, {args.steps} steps, guidance {args.guidance}, "
          f"seed {args.seed}, model {args.model}")
    pipeline = Pipeline(model, device, height, width, vae_dtype=args.vae_dtype)
    times["load + compile"] = time.perf_counter() - start
    times.update({f"  {k}": v for k, v in pipeline.times.items()})

    start = time.perf_counter()
    context, added = pipeline.encode(args.prompt, args.negative)
    times["text encoders"] = time.perf_counter() - start
    scheduler = EulerDiscrete(model.scheduler, args.steps)
    latents = pipeline.initial_latents(args.seed, scheduler)
    start = time.perf_counter()
    latents = pipeline.denoise(latents, context, added, args.steps, args.guidance,
                               each_step=lambda i, x: progress(i, args.steps, start))
    times["denoise"] = time.perf_counter() - start
    start = time.perf_counter()
    image = pipeline.decode(latents)
    times["vae decode"] = time.perf_counter() - start
    Image.fromarray(np.round(image * 255).astype(np.uint8)).save(args.output)
    image_time = times["text encoders"] + times["denoise"] + times["vae decode"]
    for name, seconds in times.items():
        print(f"{name:24s} {seconds:8.3f} s")
    print(f"{'per step':24s} {times['denoise'] / args.steps:8.3f} s")
    print(f"{'image (text to pixels)':24s} {image_time:8.3f} s -> {args.output}")


if __name__ == "__main__":
    main()
