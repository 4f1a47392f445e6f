"""SDXL text to image: the sample (samples/sdxl) against diffusers on the same GPU, same weights, same run.

Full-size SDXL base 1.0 (its configurations, random weights made by diffusers / transformers on the GPU, float16),
1024x1024, 20 Euler steps, guidance 5 (a batch-2 UNet per step), both text encoders and the float32 VAE decode:
- per image: prompt to pixels on the host, median of --images runs after one warm-up;
- the UNet step alone: ours is the compiled step (batch-2 UNet + guidance + Euler update) on device Buffers,
  diffusers' the batch-2 UNet call, made with the pipeline's arguments (so torch.compile's graph serves it too:
  the row's compiled_graphs says 1 where nothing recompiled);
- the VAE decode alone: diffusers' in float32 (its pipeline upcasts SDXL's VAE), ours in float16 with scaled
  activations (the default) and in float32;
- peak device memory: torch.cuda.max_memory_allocated for diffusers; for ours the device's used memory (cudaMemGetInfo)
  after the run less the same figure before it, and our compiled operators' persistent + temporary sizes.
- setup: our load + compile, and (with --compile) torch.compile's first call.
The weights are saved once as a diffusers folder (float16 safetensors), which our loader reads memory-mapped;
the tokenizers get a synthetic 49408-token vocabulary (byte symbols and filler, no merges), since no hub is here.
Ratio = diffusers' time / ours (above 1: we are faster).

Run (H200): python bench/bench_sdxl.py [--images 3] [--compile] [--json out.json]
     (CPU check of the script, tiny model): python bench/bench_sdxl.py --tiny [--compile]
Needs torch, diffusers, transformers, safetensors, tokenizers.
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "samples" / "sdxl"), str(ROOT / "tests")]
import directml as dml  # noqa: E402
from bench_cuda import median_seconds  # noqa: E402
from pipeline import EulerDiscrete, Pipeline  # noqa: E402
from sdxl_full_size import CONFIGS  # noqa: E402  (SDXL base's configurations)
from tokenizer import END, START, byte_symbols  # noqa: E402
from weights import load  # noqa: E402

PROMPT = "a photo of an astronaut riding a horse on mars"

SCHEDULER = dict(num_train_timesteps=1000, beta_start=0.00085, beta_end=0.012, beta_schedule="scaled_linear",
                 timestep_spacing="leading", steps_offset=1)


def write_tokenizer(folder: Path, pad: str) -> None:
    """A CLIP-shaped vocabulary (49408 ids, the byte symbols first, so "!" is id 0 as in CLIP) without merges:
    every word tokenizes to its characters, which is all a benchmark needs."""
    symbols = byte_symbols()
    tokens = symbols + [s + "</w>" for s in symbols]
    tokens += [f"filler{i}" for i in range(49408 - 2 - len(tokens))] + [START, END]
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "vocab.json").write_text(json.dumps({t: i for i, t in enumerate(tokens)}))
    (folder / "merges.txt").write_text("#version: 0.2\n")
    special = dict(bos_token=START, eos_token=END, unk_token=END, pad_token=pad)
    (folder / "special_tokens_map.json").write_text(json.dumps(special))
    (folder / "tokenizer_config.json").write_text(json.dumps(dict(special, model_max_length=77)))


def make_model(folder: Path, tiny: bool, torch_device: str, dtype):
    """diffusers' SDXL pipeline with random weights on `torch_device`, also saved to `folder` for ours."""
    from diffusers.utils import logging as diffusers_logging
    from transformers.utils import logging as transformers_logging
    for logging in (diffusers_logging, transformers_logging):  # their notes and progress bars, not the figures
        logging.set_verbosity_error()
        logging.disable_progress_bar()
    from diffusers import AutoencoderKL, EulerDiscreteScheduler, StableDiffusionXLPipeline, UNet2DConditionModel
    from transformers import CLIPTextConfig, CLIPTextModel, CLIPTextModelWithProjection, CLIPTokenizer
    configs = CONFIGS
    if tiny:
        import sdxl_tiny
        configs = sdxl_tiny.CONFIGS
    torch.manual_seed(0)
    with torch.device(torch_device):
        parts = dict(unet=UNet2DConditionModel(**configs["unet"]), vae=AutoencoderKL(**configs["vae"]),
                     text_encoder=CLIPTextModel(CLIPTextConfig(**configs["text_encoder"])),
                     text_encoder_2=CLIPTextModelWithProjection(CLIPTextConfig(**configs["text_encoder_2"])))
    for name, part in parts.items():
        part.to(dtype).eval().save_pretrained(folder / name)
    scheduler = EulerDiscreteScheduler(**SCHEDULER)
    scheduler.save_pretrained(folder / "scheduler")
    for name, pad in (("tokenizer", END), ("tokenizer_2", "!")):
        write_tokenizer(folder / name, pad)
        parts[name] = CLIPTokenizer.from_pretrained(str(folder / name))
    return StableDiffusionXLPipeline(scheduler=scheduler, **parts)


def median_time(fn, runs: int) -> float:
    return median_seconds(fn, runs, warmup=1)  # one warm-up: an image takes seconds


def bench_diffusers(pipe, args, size, cuda: bool, label: str) -> dict:
    def sync():
        if cuda:
            torch.cuda.synchronize()

    def image():
        pipe(PROMPT, height=size, width=size, num_inference_steps=args.steps, guidance_scale=args.guidance,
             output_type="np")

    unet_dtype = pipe.unet.dtype
    device = pipe.unet.device
    latent = size // pipe.vae_scale_factor
    sample = torch.randn(2, 4, latent, latent, device=device, dtype=unet_dtype)
    context = torch.randn(2, 77, pipe.unet.config.cross_attention_dim, device=device, dtype=unet_dtype)
    pooled = torch.randn(2, pipe.text_encoder_2.config.projection_dim, device=device, dtype=unet_dtype)
    time_ids = torch.tensor([[size, size, 0, 0, size, size]] * 2, device=device, dtype=unet_dtype)

    def step():  # the UNet called as the pipeline calls it: torch.compile's guards then hold, no recompile
        with torch.no_grad():
            pipe.unet(sample, torch.tensor(501.0, device=device), encoder_hidden_states=context, timestep_cond=None,
                      cross_attention_kwargs=None, added_cond_kwargs=dict(text_embeds=pooled, time_ids=time_ids),
                      return_dict=False)
        sync()

    pipe.set_progress_bar_config(disable=True)
    row = {"case": label}
    if cuda:
        torch.cuda.reset_peak_memory_stats()
    start = time.perf_counter()
    image()  # the first call: torch.compile compiles here
    row["first_call_s"] = time.perf_counter() - start
    row["image_s"] = median_time(image, args.images)
    row["unet_step_s"] = median_time(step, args.unet_runs)
    vae_dtype = pipe.vae.dtype
    pipe.vae.to(torch.float32)  # as the pipeline does for SDXL's VAE (force_upcast)
    latents = torch.randn(1, 4, latent, latent, device=device, dtype=torch.float32)

    def decode():
        with torch.no_grad():
            pipe.vae.decode(latents / pipe.vae.config.scaling_factor)
        sync()

    row["vae_decode_s"] = median_time(decode, args.images)
    pipe.vae.to(vae_dtype)
    if cuda:
        row["peak_gib"] = torch.cuda.max_memory_allocated() / 2 ** 30
    if hasattr(pipe.unet, "_orig_mod"):  # torch.compile: 1 graph unless something recompiled (minutes each)
        from torch._dynamo.utils import counters
        row["compiled_graphs"] = counters["stats"]["unique_graphs"]
    return row


def device_used_bytes(cuda: bool) -> int:
    if not cuda:
        return 0
    free, total = torch.cuda.mem_get_info()
    return total - free


def bench_ours(folder: Path, args, size, device: dml.Device, cuda: bool) -> dict:
    before = device_used_bytes(cuda)
    start = time.perf_counter()
    pipeline = Pipeline(load(folder), device, size, size)
    row = {"case": f"directml ({device.kind})", "first_call_s": time.perf_counter() - start}
    row.update({f"{k.replace(' ', '_')}_s": v for k, v in pipeline.times.items()})
    scheduler = EulerDiscrete(pipeline.model.scheduler, args.steps)

    def image():
        context, added = pipeline.encode(PROMPT, "")
        latents = pipeline.denoise(pipeline.initial_latents(0, scheduler), context, added, args.steps, args.guidance)
        return pipeline.decode(latents)

    row["image_s"] = median_time(image, args.images)
    context, added = pipeline.encode(PROMPT, "")
    inputs = dict(context=dml.Buffer(device, context.reshape(1, 1, -1, context.shape[-1]), pipeline.unet_dtype),
                  added=dml.Buffer(device, added.reshape(1, 1, *added.shape), pipeline.unet_dtype),
                  time=pipeline.time_features(501.0), guidance=np.full((1, 1, 1, 1), args.guidance, np.float32),
                  scale_in=np.full((1, 1, 1, 1), 0.1, np.float32), step=np.zeros((1, 1, 1, 1), np.float32),
                  latents=dml.Buffer(device, pipeline.initial_latents(0, scheduler)))
    runs = []
    for _ in range(args.unet_runs + 1):  # a chain of steps, each output the next input; one synchronizing read
        start = time.perf_counter()
        inputs["latents"], = pipeline.step(inputs, readback=False)
        inputs["latents"].numpy()
        runs.append(time.perf_counter() - start)
    row["unet_step_s"] = statistics.median(runs[1:])
    row["vae_decode_s"] = median_time(lambda: pipeline.decode(inputs["latents"]), args.images)
    float32_vae = pipeline.build_vae("float32")
    row["vae_decode_float32_s"] = median_time(lambda: float32_vae(dict(latents=inputs["latents"])), args.images)
    ops = (pipeline.text, pipeline.step, pipeline.vae)
    row["persistent_gib"] = sum(op.persistent_size for op in ops) / 2 ** 30
    row["temporary_gib"] = sum(op.temporary_size for op in ops) / 2 ** 30
    if cuda:
        row["peak_gib"] = (device_used_bytes(cuda) - before) / 2 ** 30
    return row


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--tiny", action="store_true", help="the tests' tiny model at 32x32 (checks the script on a CPU)")
    p.add_argument("--images", type=int, default=3)
    p.add_argument("--unet-runs", type=int, default=10)
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--guidance", type=float, default=5.0)
    p.add_argument("--compile", action="store_true", help="also diffusers with torch.compile on the UNet (minutes)")
    p.add_argument("--device", default=None, help="our executor (default: cuda if torch sees a GPU, else cpu)")
    p.add_argument("--ours-only", action="store_true",
                   help="time the sample alone (diffusers still makes the weights): for profiling our setup")
    p.add_argument("--json", type=Path)
    args = p.parse_args()
    cuda = torch.cuda.is_available()
    torch_device, dtype = ("cuda", torch.float16) if cuda else ("cpu", torch.float32)
    device = dml.Device(args.device or ("cuda" if cuda else "cpu"))
    size = 32 if args.tiny else 1024
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        pipe = make_model(Path(tmp), args.tiny, torch_device, dtype)
        print(f"random SDXL{' (tiny)' if args.tiny else ''} made and saved in {time.perf_counter() - start:.1f} s; "
              f"{size}x{size}, {args.steps} steps, guidance {args.guidance}, torch {torch.__version__} on "
              f"{torch.cuda.get_device_name() if cuda else 'cpu'}, directml on {device.kind} ({device.name})",
              flush=True)
        if not args.ours_only:
            rows.append(bench_diffusers(pipe, args, size, cuda, "diffusers eager"))
            print(rows[-1], flush=True)
        if args.compile and not args.ours_only:
            pipe.unet = torch.compile(pipe.unet)
            rows.append(bench_diffusers(pipe, args, size, cuda, "diffusers torch.compile"))
            print(rows[-1], flush=True)
        del pipe
        gc.collect()
        if cuda:
            torch.cuda.empty_cache()
        rows.append(bench_ours(Path(tmp), args, size, device, cuda))
        print(rows[-1], flush=True)

    ours = rows[-1]
    print("\n| run | image s | UNet step ms | VAE decode ms | peak GiB | setup s | image ratio | step ratio |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for row in rows:
        print(f"| {row['case']} | {row['image_s']:.3f} | {row['unet_step_s'] * 1e3:.1f} | "
              f"{row['vae_decode_s'] * 1e3:.1f} | {row.get('peak_gib', float('nan')):.1f} | "
              f"{row['first_call_s']:.1f} | {row['image_s'] / ours['image_s']:.2f} | "
              f"{row['unet_step_s'] / ours['unet_step_s']:.2f} |")
    print(f"ours: VAE decode in float32 {ours['vae_decode_float32_s'] * 1e3:.1f} ms (float16 with scaled "
          f"activations: {ours['vae_decode_s'] * 1e3:.1f} ms)")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
