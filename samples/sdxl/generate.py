"""Text to image with Stable Diffusion XL, written with nothing but directml's operators.

Run: python samples/sdxl/generate.py "a prompt" --model DIR_OR_FILE [--negative ""] [--size 1024] [--steps 20]
         [--guidance 5.0] [--seed 0] [--device cpu|cuda|directml] [--output image.png] [--vae-dtype float16]
         [--image in.png [--strength 0.3]]
--model is a diffusers folder (stabilityai/stable-diffusion-xl-base-1.0's layout) or a single .safetensors
checkpoint (ComfyUI / A1111's). --size is WIDTH or WIDTHxHEIGHT, multiples of 8. --image starts from an image
(img2img, as diffusers' StableDiffusionXLImg2ImgPipeline): its size, cut down to multiples of 8, unless --size
resizes it; --strength keeps the last int(steps * strength) steps. See samples/sdxl/README.md.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import directml as dml  # noqa: E402
from pipeline import EulerDiscrete, Pipeline, img2img_start  # noqa: E402
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
    p.add_argument("--size", type=image_size,
                   help="WIDTH or WIDTHxHEIGHT (default 1024; with --image, the image's, cut to multiples of 8)")
    p.add_argument("--steps", default=20, type=int)
    p.add_argument("--guidance", default=5.0, type=float)
    p.add_argument("--seed", default=0, type=int)
    p.add_argument("--device", default=None, help="cpu, cuda or directml (default: the best here)")
    p.add_argument("--output", default=Path("image.png"), type=Path)
    p.add_argument("--vae-dtype", default=None, choices=["float16", "float32"],
                   help="the VAE's precision (default float16, activations scaled to stay in range, see vae.py; "
                        "float32 on directml)")
    p.add_argument("--image", type=Path, help="img2img: start from this image (the VAE encodes it)")
    p.add_argument("--strength", type=float,
                   help="img2img: how much of the image is redrawn, 0..1 (default 0.3, as diffusers)")
    args = p.parse_args()
    from PIL import Image

    source, first = None, 0
    if args.strength is not None and args.image is None:
        p.error("--strength goes with --image")
    if args.image is not None:
        try:
            first = img2img_start(args.steps, 0.3 if args.strength is None else args.strength)
        except ValueError as e:
            p.error(str(e))
        source = Image.open(args.image).convert("RGB")
        args.size = args.size or tuple(n - n % 8 for n in source.size)
        if source.size != args.size:
            source = source.resize(args.size, Image.Resampling.LANCZOS)  # diffusers' image processor resamples so
        source = np.asarray(source, np.float32) / 255

    times = {}
    start = time.perf_counter()
    model = load(args.model)
    device = dml.Device(args.device)
    width, height = args.size or (1024, 1024)
    print(f"{device.kind} ({device.name}): {width}x{height}, {args.steps} steps, guidance {args.guidance}, "
          f"seed {args.seed}, model {args.model}")
    pipeline = Pipeline(model, device, height, width, vae_dtype=args.vae_dtype, vae_encoder=source is not None)
    times["load + compile"] = time.perf_counter() - start
    times.update({f"  {k}": v for k, v in pipeline.times.items()})

    start = time.perf_counter()
    context, added = pipeline.encode(args.prompt, args.negative)
    times["text encoders"] = time.perf_counter() - start
    scheduler = EulerDiscrete(model.scheduler, args.steps)
    if source is None:
        latents = pipeline.initial_latents(args.seed, scheduler)
    else:
        start = time.perf_counter()
        rng = np.random.default_rng(args.seed)  # the posterior's sample, then the added noise, as diffusers draws
        latents = pipeline.image_latents(source, rng.standard_normal(pipeline.latent_shape, dtype=np.float32))
        pipeline.vae_encoder = None  # used once: its weights and intermediates (GiBs at 1024 on a cpu) go back
        latents += rng.standard_normal(pipeline.latent_shape, dtype=np.float32) * scheduler.sigmas[first]
        times["vae encode"] = time.perf_counter() - start
    steps = args.steps - first
    start = time.perf_counter()
    latents = pipeline.denoise(latents, context, added, args.steps, args.guidance, start=first,
                               each_step=lambda i, x: progress(i - first, steps, start))
    times["denoise"] = time.perf_counter() - start
    start = time.perf_counter()
    image = pipeline.decode(latents)
    times["vae decode"] = time.perf_counter() - start
    Image.fromarray(np.round(image * 255).astype(np.uint8)).save(args.output)
    image_time = times["text encoders"] + times.get("vae encode", 0) + times["denoise"] + times["vae decode"]
    for name, seconds in times.items():
        print(f"{name:24s} {seconds:8.3f} s")
    print(f"{'per step':24s} {times['denoise'] / steps:8.3f} s")
    print(f"{'image (text to pixels)':24s} {image_time:8.3f} s -> {args.output}")


if __name__ == "__main__":
    main()
