"""Writes the tiny SDXL's manifest (tests/data/sdxl_tiny.json) and diffusers' outputs for it
(tests/data/sdxl_reference.npz), which tests/test_sdxl.py compares the sample with.

Needs diffusers, transformers, safetensors, tokenizers and (CPU) torch; the test itself needs none of the first
two. Everything runs in float32 on the CPU.
Run: python tests/sdxl_reference.py
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import numpy as np
import torch
from diffusers import EulerDiscreteScheduler, StableDiffusionXLImg2ImgPipeline, StableDiffusionXLPipeline
from PIL import Image

import sdxl_tiny as tiny
from sdxl_full_size import manifest
from sdxl_tiny import (GUIDANCE, IMG2IMG_STARTS, IMG2IMG_STEPS, IMG2IMG_STRENGTH, NEGATIVE, ODD_LATENTS, PROMPT,
                       REFERENCE, SEED, STEPS, UNET_TIMESTEP)


def write_manifest() -> None:
    """Each component's weight names (transformers' text models with the `text_model.` prefix) and shapes."""
    tiny.MANIFEST.parent.mkdir(exist_ok=True)
    tiny.MANIFEST.write_text(json.dumps(manifest(tiny.CONFIGS), separators=(",", ":")))


def img2img(pipe, rng, out: dict) -> None:
    """The VAE encoder's posterior for an image, and diffusers' img2img pipeline on it (an empty negative prompt)
    with given noise: the posterior's sample and the added noise, drawn by diffusers' randn_tensor, are ours."""
    import diffusers.models.autoencoders.vae as vae_module
    import diffusers.pipelines.stable_diffusion_xl.pipeline_stable_diffusion_xl_img2img as img2img_module
    y, x = np.mgrid[:tiny.HEIGHT, :tiny.WIDTH] / np.float32(max(tiny.HEIGHT, tiny.WIDTH))
    smooth = np.stack([y, x, 1 - (x + y) / 2], axis=-1) * 255
    out["img2img_input"] = np.clip(smooth + rng.normal(0, 24, smooth.shape), 0, 255).astype(np.uint8)
    pixels = torch.from_numpy(out["img2img_input"].astype(np.float32) / 255).permute(2, 0, 1)[None] * 2 - 1
    posterior = pipe.vae.encode(pixels).latent_dist
    out["vae_mean"], out["vae_logvar"] = posterior.mean.numpy(), posterior.logvar.numpy()
    latent_shape = (1, 4, tiny.HEIGHT // 2, tiny.WIDTH // 2)
    out["posterior_noise"] = rng.standard_normal(latent_shape, dtype=np.float32)
    out["img2img_noise"] = rng.standard_normal(latent_shape, dtype=np.float32)
    draws = [torch.from_numpy(out["posterior_noise"]), torch.from_numpy(out["img2img_noise"])]

    def given_noise(shape, generator=None, device=None, dtype=None, layout=None):
        noise = draws.pop(0)
        assert tuple(shape) == tuple(noise.shape)
        return noise.to(dtype)

    vae_module.randn_tensor = img2img_module.randn_tensor = given_noise
    img2img = StableDiffusionXLImg2ImgPipeline(**pipe.components)
    steps = []

    def keep(pipeline, i, t, kwargs):
        steps.append(kwargs["latents"].numpy().copy())
        return kwargs

    image = img2img(PROMPT, image=Image.fromarray(out["img2img_input"]), strength=IMG2IMG_STRENGTH,
                    num_inference_steps=IMG2IMG_STEPS, guidance_scale=GUIDANCE, output_type="np",
                    callback_on_step_end=keep).images
    assert not draws
    out["img2img_step_latents"], out["img2img_image"] = np.stack(steps), image[0].astype(np.float32)
    starts = []
    for steps, strength in IMG2IMG_STARTS:  # diffusers' own cut of the timesteps by strength
        img2img.scheduler.set_timesteps(steps)
        _, kept = img2img.get_timesteps(steps, strength, "cpu")
        starts.append(steps - kept)
    out["img2img_starts"] = np.array(starts)


def main() -> None:
    write_manifest()
    with tempfile.TemporaryDirectory() as tmp:
        folder = tiny.write_folder(Path(tmp) / "tiny-sdxl")
        pipe = StableDiffusionXLPipeline.from_pretrained(folder, torch_dtype=torch.float32)
        for component in ("unet", "vae", "text_encoder", "text_encoder_2"):  # diffusers read every weight we wrote
            state = getattr(pipe, component).state_dict()
            for name, array in tiny.weights(component).items():
                key = name if name in state else name.removeprefix("text_model.")
                np.testing.assert_array_equal(state[key].numpy(), array, err_msg=f"{component}.{name}")
        # The single file the test writes is what diffusers' own single-file loader reads as the same model.
        single = StableDiffusionXLPipeline.from_single_file(tiny.write_single_file(Path(tmp) / "tiny.safetensors"),
                                                            config=str(folder), torch_dtype=torch.float32,
                                                            local_files_only=True)
        for component in ("unet", "vae", "text_encoder", "text_encoder_2"):
            mine, theirs = getattr(single, component).state_dict(), getattr(pipe, component).state_dict()
            for key, value in theirs.items():
                assert torch.equal(mine[key], value), f"{component}.{key}"
        out = {}
        tokens = [pipe.tokenizer, pipe.tokenizer_2]
        for i, tok in enumerate(tokens):
            out[f"ids_{i}"] = tok([NEGATIVE, PROMPT], padding="max_length", max_length=77, truncation=True,
                                  return_tensors="np").input_ids.astype(np.int32)
        with torch.no_grad():
            embeds, negative_embeds, pooled, negative_pooled = pipe.encode_prompt(
                PROMPT, device="cpu", num_images_per_prompt=1, do_classifier_free_guidance=True,
                negative_prompt=NEGATIVE)
            out["context"] = torch.cat([negative_embeds, embeds]).numpy()
            out["pooled"] = torch.cat([negative_pooled, pooled]).numpy()
            _, zero_embeds, _, zero_pooled = pipe.encode_prompt(PROMPT, device="cpu", num_images_per_prompt=1,
                                                                do_classifier_free_guidance=True)
            assert not zero_embeds.any() and not zero_pooled.any()  # force_zeros_for_empty_prompt

            rng = np.random.default_rng(SEED)
            latent_shape = (1, 4, tiny.HEIGHT // 2, tiny.WIDTH // 2)
            out["unet_sample"] = rng.standard_normal((2, *latent_shape[1:]), dtype=np.float32)
            time_ids = torch.tensor([[tiny.HEIGHT, tiny.WIDTH, 0, 0, tiny.HEIGHT, tiny.WIDTH]] * 2, dtype=torch.float32)
            out["unet_output"] = pipe.unet(torch.from_numpy(out["unet_sample"]), torch.tensor(UNET_TIMESTEP),
                                           torch.from_numpy(out["context"]),
                                           added_cond_kwargs=dict(text_embeds=torch.from_numpy(out["pooled"]),
                                                                  time_ids=time_ids)).sample.numpy()

            # Latents whose sizes do not divide by 4 (an image of 8 (4k + 1) pixels in SDXL) meet odd-sized skips.
            out["unet_odd_sample"] = rng.standard_normal((2, 4, *ODD_LATENTS), dtype=np.float32)
            odd_size = [2 * ODD_LATENTS[0], 2 * ODD_LATENTS[1]]  # the image the tiny VAE would make
            odd_ids = torch.tensor([[*odd_size, 0, 0, *odd_size]] * 2, dtype=torch.float32)
            out["unet_odd_output"] = pipe.unet(torch.from_numpy(out["unet_odd_sample"]), torch.tensor(UNET_TIMESTEP),
                                               torch.from_numpy(out["context"]),
                                               added_cond_kwargs=dict(text_embeds=torch.from_numpy(out["pooled"]),
                                                                      time_ids=odd_ids)).sample.numpy()

            # The pipeline with an empty negative prompt (zeros), from given noise, latents after each step.
            out["noise"] = rng.standard_normal(latent_shape, dtype=np.float32)
            steps = []

            def keep(pipeline, i, t, kwargs):
                steps.append(kwargs["latents"].numpy().copy())
                return kwargs

            image = pipe(PROMPT, height=tiny.HEIGHT, width=tiny.WIDTH, num_inference_steps=STEPS,
                         guidance_scale=GUIDANCE, latents=torch.from_numpy(out["noise"]), output_type="np",
                         callback_on_step_end=keep).images
            out["step_latents"] = np.stack(steps)
            out["image"] = image[0].astype(np.float32)
            img2img(pipe, rng, out)
    for spacing in ("leading", "trailing", "linspace"):  # the scheduler at 20 steps, each timestep spacing
        scheduler = EulerDiscreteScheduler.from_config(dict(tiny.SCHEDULER, timestep_spacing=spacing))
        scheduler.set_timesteps(20)
        out[f"timesteps_{spacing}"] = scheduler.timesteps.numpy()
        out[f"sigmas_{spacing}"] = scheduler.sigmas.numpy()
        out[f"init_noise_sigma_{spacing}"] = np.float32(scheduler.init_noise_sigma)
    np.savez_compressed(REFERENCE, **out)
    print(f"wrote {tiny.MANIFEST} ({tiny.MANIFEST.stat().st_size} bytes), {REFERENCE} ({REFERENCE.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
