"""Text to image with SDXL on one device: three compiled graphs, each compiled once per image size.

- text: both encoders for the prompt and the negative prompt at once -> the UNet's context (the penultimate
  states of CLIP-L and bigG side by side) and bigG's pooled embedding;
- step: one Euler step with classifier-free guidance. The latents go in (float32), are scaled by the step's
  1 / sqrt(sigma^2 + 1), and run through the UNet as one batch of two (negative, positive); the two predictions
  combine as uncond + guidance (cond - uncond) and the latents come out advanced by (sigma_next - sigma) times
  that. Each step's output Buffer is the next step's input: the latents stay on the device;
- vae: the decoder, latents -> image in [0, 1], in float16 with its activations scaled (vae.py) by default;
- vae_encoder (img2img, built on first use): image in [0, 1] -> the posterior's moments, in the VAE's precision.
  diffusers' StableDiffusionXLImg2ImgPipeline: the latents are the posterior's sample (mean + std * noise) times
  scaling_factor, plus noise at the first kept step's sigma; strength keeps the last int(steps * strength) steps.

The weights live in the graphs as constants, uploaded to the device once when the graph compiles. Each graph is
built (Python, reading the weights) while the one before it compiles on a worker thread (compile lets go of the
GIL), one compile at a time: their measurements of kernels would otherwise share the device.
"""

from __future__ import annotations

import sys
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

import directml as dml
import clip
import unet
import vae
from layers import Layers, timestep_embedding
from weights import Model

LATENT_CHANNELS = 4
# The float16 VAE carries its residual stream scaled by this (vae.py): SDXL's peaks of ~1e4 stay far from 65504.
VAE_FLOAT16_SCALE = 1 / 32


class EulerDiscrete:
    """diffusers' EulerDiscreteScheduler (no churn, epsilon prediction) with the configuration's betas and
    timestep spacing, computed in float32 as diffusers does."""

    def __init__(self, config: dict, steps: int):
        n = config["num_train_timesteps"]
        if config["beta_schedule"] == "scaled_linear":
            betas = np.linspace(config["beta_start"] ** 0.5, config["beta_end"] ** 0.5, n, dtype=np.float32) ** 2
        elif config["beta_schedule"] == "linear":
            betas = np.linspace(config["beta_start"], config["beta_end"], n, dtype=np.float32)
        else:
            raise ValueError(f"beta_schedule {config['beta_schedule']!r} is not supported")
        alphas_cumprod = np.cumprod(1 - betas.astype(np.float32), dtype=np.float32)
        sigmas = ((1 - alphas_cumprod) / alphas_cumprod) ** 0.5
        spacing = config.get("timestep_spacing", "leading")
        if spacing == "leading":
            t = (np.arange(steps) * (n // steps)).round()[::-1].astype(np.float32) + config.get("steps_offset", 0)
        elif spacing == "trailing":
            t = (np.arange(n, 0, -n / steps)).round().astype(np.float32) - 1
        elif spacing == "linspace":
            t = np.linspace(0, n - 1, steps, dtype=np.float64)[::-1].astype(np.float32)
        else:
            raise ValueError(f"timestep_spacing {spacing!r} is not supported")
        self.timesteps = t
        self.sigmas = np.concatenate([np.interp(t, np.arange(n), sigmas), [0.0]]).astype(np.float32)
        top = self.sigmas.max()
        self.init_noise_sigma = top if spacing in ("linspace", "trailing") else np.float32((top ** 2 + 1) ** 0.5)


def img2img_start(steps: int, strength: float) -> int:
    """img2img's first step of `steps`: `strength` (0..1) keeps the last int(steps * strength) of them, as
    diffusers' StableDiffusionXLImg2ImgPipeline.get_timesteps does."""
    if not 0 <= strength <= 1:
        raise ValueError(f"strength must be in [0, 1], got {strength}")
    kept = min(int(steps * strength), steps)
    if kept < 1:
        raise ValueError(f"strength {strength} keeps none of {steps} steps: raise the strength or the steps")
    return steps - kept


class Pipeline:
    """SDXL compiled for one device and one image size (multiples of the VAE's factor: 8 for SDXL)."""

    def __init__(self, model: Model, device: dml.Device, height: int, width: int, unet_dtype: str = "float16",
                 text_dtype: str = "float16", vae_dtype: str | None = None, vae_encoder: bool = False):
        self.model, self.device = model, device
        self.unet_dtype, self.text_dtype = unet_dtype, text_dtype
        self.height, self.width = height, width
        factor = 2 ** (len(model.vae.config["block_out_channels"]) - 1)
        if height % factor or width % factor:
            raise ValueError(f"the image size must be a multiple of {factor}, got {width}x{height}")
        self.latent_shape = [1, LATENT_CHANNELS, height // factor, width // factor]
        # float16 unless on DirectML: there an overflowing float16 decoder can give a finite wrong image (lavapipe and
        # the H200, 2026-12-02) rather than the NaNs that start the float32 fallback (_run_vae).
        self.vae_dtype = vae_dtype or ("float32" if device.kind == "directml" else "float16")
        # "build X" and "compile X" overlap: the sum of the times is more than the setup's wall time. The small
        # graphs first, so that their compiles run while the UNet's graph is built.
        self.times: dict[str, float] = {}
        graphs = dict(vae=lambda: self._vae_graph(self.vae_dtype))
        if vae_encoder:
            graphs["vae_encoder"] = lambda: self._vae_encoder_graph(self.vae_dtype)
        graphs.update(text_encoders=self._text_graph, unet=self._step_graph)
        compiles = {}
        with ThreadPoolExecutor(max_workers=1) as compiler:
            for name, build in graphs.items():
                label = name.replace("_", " ")
                graph, outputs = self._timed("build " + label, build)
                compiles[name] = compiler.submit(self._timed, "compile " + label, graph.compile, outputs)
        self.vae, self.text, self.step = (compiles[n].result() for n in ("vae", "text_encoders", "unet"))
        self.vae_encoder = compiles["vae_encoder"].result() if vae_encoder else None  # else built on first use
        self._unet_call = None

    def _timed(self, name, work, *args):
        start = time.perf_counter()
        result = work(*args)
        self.times[name] = time.perf_counter() - start
        return result

    # --- the graphs: each builder returns (graph, outputs) ------------------------------------------------------

    def _text_graph(self):
        g = dml.Graph(self.device)
        first, second = self.model.text_encoder, self.model.text_encoder_2
        ids = [g.input([1, 1, 1, 2 * 77], "int32", name=n) for n in ("ids", "ids_2")]
        eos = g.input([1, 2, 1, 77], self.text_dtype, name="eos")
        with self.model.held():
            states, _ = clip.build(Layers(g, first.weights, self.text_dtype), first.config, ids[0], None)
            states_2, pooled = clip.build(Layers(g, second.weights, self.text_dtype), second.config, ids[1], eos)
        return g, [dml.join([states, states_2], axis=3), pooled]

    def _unet_inputs(self, g: dml.Graph, batch: int):
        weights = self.model.unet.weights
        context_dim = weights.shape(next(n for n in weights if n.endswith("attn2.to_k.weight")))[1]
        return (g.input([1, 1, 1, weights.shape("time_embedding.linear_1.weight")[1]], self.unet_dtype, name="time"),
                g.input([1, 1, batch * 77, context_dim], self.unet_dtype, name="context"),
                g.input([1, 1, batch, weights.shape("add_embedding.linear_1.weight")[1]], self.unet_dtype,
                        name="added"))

    def _step_graph(self):
        g = dml.Graph(self.device)
        latents = g.input(self.latent_shape, name="latents")
        scale_in, step, guidance = (g.input([1, 1, 1, 1], name=n) for n in ("scale_in", "step", "guidance"))
        time_features, context, added = self._unet_inputs(g, batch=2)

        def full(scalar):  # a [1, 1, 1, 1] input over the latents' shape
            return dml.broadcast(scalar, self.latent_shape)

        sample = dml.cast(latents * full(scale_in), dtype=self.unet_dtype)
        with self.model.held():
            prediction = unet.build(Layers(g, self.model.unet.weights, self.unet_dtype), self.model.unet.config,
                                    dml.join([sample, sample], axis=0), time_features, context, added)
        uncond, cond = dml.split(dml.cast(prediction, dtype="float32"), axis=0, output_axis_sizes=[1, 1])
        return g, [latents + full(step) * (uncond + full(guidance) * (cond - uncond))]

    def _vae_graph(self, dtype: str):
        g = dml.Graph(self.device)
        latents = g.input(self.latent_shape, name="latents")
        x = latents if dtype == "float32" else dml.cast(latents, dtype=dtype)
        with self.model.held():
            image = vae.build(Layers(g, self.model.vae.weights, dtype), self.model.vae.config, x,
                              activation_scale=1.0 if dtype == "float32" else VAE_FLOAT16_SCALE)
        return g, [image if dtype == "float32" else dml.cast(image, dtype="float32")]

    def _vae_encoder_graph(self, dtype: str):
        g = dml.Graph(self.device)
        image = g.input([1, 3, self.height, self.width], name="image")  # in [0, 1]
        x = image * 2.0 - 1.0
        with self.model.held():
            moments = vae.encode(Layers(g, self.model.vae.weights, dtype), self.model.vae.config,
                                 x if dtype == "float32" else dml.cast(x, dtype=dtype),
                                 activation_scale=1.0 if dtype == "float32" else VAE_FLOAT16_SCALE)
        return g, [moments if dtype == "float32" else dml.cast(moments, dtype="float32")]

    def build_vae(self, dtype: str) -> dml.CompiledOperator:
        graph, outputs = self._vae_graph(dtype)
        return graph.compile(outputs)

    def build_vae_encoder(self, dtype: str) -> dml.CompiledOperator:
        graph, outputs = self._vae_encoder_graph(dtype)
        return graph.compile(outputs)

    def unet_call(self, sample: np.ndarray, timestep: float, context: np.ndarray, added: np.ndarray) -> np.ndarray:
        """One plain UNet evaluation (no guidance) for a batch of two: the prediction for `sample` [2, C, h, w]
        at `timestep`, with context [2, 77, D] and the added features [2, P]. (For tests and benchmarks.)"""
        if self._unet_call is None:
            g = dml.Graph(self.device)
            s = g.input([2, *self.latent_shape[1:]], self.unet_dtype, name="sample")
            inputs = self._unet_inputs(g, batch=2)
            with self.model.held():
                prediction = unet.build(Layers(g, self.model.unet.weights, self.unet_dtype), self.model.unet.config,
                                        s, *inputs)
            self._unet_call = g.compile([prediction])
        out, = self._unet_call(dict(sample=sample, time=self.time_features(timestep), context=context.reshape(-1),
                                    added=added.reshape(-1)))
        return out

    # --- the stages ---------------------------------------------------------------------------------------------

    def time_features(self, timestep: float) -> np.ndarray:
        cfg = self.model.unet.config
        dim = self.model.unet.weights.shape("time_embedding.linear_1.weight")[1]
        return timestep_embedding([timestep], dim, cfg.get("flip_sin_to_cos", True),
                                  cfg.get("freq_shift", 0)).reshape(1, 1, 1, dim)

    def encode(self, prompt: str, negative: str = "") -> tuple[np.ndarray, np.ndarray]:
        """The context [2, 77, D] and the added features [2, P] (pooled text embedding, then the size and crop
        conditions' sinusoidal features) for (negative, positive). An empty negative prompt gives zeros, as
        diffusers' force_zeros_for_empty_prompt does."""
        ids = self.model.tokenizer([negative, prompt])
        ids_2 = self.model.tokenizer_2([negative, prompt])
        eos = np.zeros((2, 77), np.float32)
        eos[np.arange(2), self.model.tokenizer_2.end_positions(ids_2)] = 1
        context, pooled = self.text(dict(ids=ids.reshape(-1), ids_2=ids_2.reshape(-1), eos=eos.reshape(-1)))
        context = context.reshape(2, 77, -1).astype(np.float32)
        pooled = pooled.reshape(2, -1).astype(np.float32)
        if not negative:
            context[0], pooled[0] = 0, 0
        cfg = self.model.unet.config
        conditions = [self.height, self.width, 0, 0, self.height, self.width]  # original size, crop, target size
        features = timestep_embedding(conditions, cfg.get("addition_time_embed_dim", 256),
                                      cfg.get("flip_sin_to_cos", True), cfg.get("freq_shift", 0)).reshape(1, -1)
        return context, np.concatenate([pooled, np.repeat(features, 2, axis=0)], axis=1)

    def initial_latents(self, seed: int, scheduler: EulerDiscrete) -> np.ndarray:
        noise = np.random.default_rng(seed).standard_normal(self.latent_shape, dtype=np.float32)
        return noise * scheduler.init_noise_sigma

    def image_latents(self, image: np.ndarray, noise: np.ndarray | None) -> np.ndarray:
        """img2img's clean latents [1, 4, h, w] for an image [H, W, 3] in [0, 1] (the pipeline's size): the VAE
        encoder's posterior sampled with `noise` (mean + std * noise; its mean for None), times scaling_factor."""
        if image.shape != (self.height, self.width, 3):
            raise ValueError(f"the image is {image.shape}, the pipeline's size is ({self.height}, {self.width}, 3)")
        if self.vae_encoder is None:
            self.vae_encoder = self.build_vae_encoder(self.vae_dtype)
        image = np.ascontiguousarray(image.transpose(2, 0, 1)[None], np.float32)
        moments = self._run_vae("vae_encoder", dict(image=image))
        mean, log_variance = np.split(moments, 2, axis=1)
        if noise is not None:
            mean = mean + np.exp(0.5 * np.clip(log_variance, -30, 20)) * noise
        return (mean * np.float32(self.model.vae.config.get("scaling_factor", 0.13025))).astype(np.float32)

    def denoise(self, latents: np.ndarray, context: np.ndarray, added: np.ndarray, steps: int, guidance: float,
                each_step=None, start: int = 0) -> dml.Buffer:
        """The latents (a Buffer) after Euler steps `start`..`steps - 1` of `steps` from `latents` (float32: for
        text to image, noise scaled by the scheduler's init_noise_sigma; for img2img, image latents plus noise
        times sigmas[start]). `each_step(i, latents)` is called after each step."""
        scheduler = EulerDiscrete(self.model.scheduler, steps)
        fixed = dict(context=dml.Buffer(self.device, context.reshape(1, 1, -1, context.shape[-1]), self.unet_dtype),
                     added=dml.Buffer(self.device, added.reshape(1, 1, *added.shape), self.unet_dtype),
                     guidance=np.full((1, 1, 1, 1), guidance, np.float32))
        x = dml.Buffer(self.device, np.ascontiguousarray(latents, np.float32))
        sigmas = scheduler.sigmas
        for i, t in enumerate(scheduler.timesteps[start:], start):
            x, = self.step(dict(fixed, latents=x, time=self.time_features(t),
                                scale_in=np.full((1, 1, 1, 1), 1 / np.sqrt(sigmas[i] ** 2 + 1), np.float32),
                                step=np.full((1, 1, 1, 1), sigmas[i + 1] - sigmas[i], np.float32)),
                           readback=False)
            if each_step is not None:
                each_step(i, x)
        return x

    def decode(self, latents) -> np.ndarray:
        """The image [H, W, 3] (float32 in [0, 1]) for latents (a Buffer or an array). Should the float16 VAE
        still overflow (a NaN in the image), the VAE is rebuilt in float32 and the image decoded again."""
        return self._run_vae("vae", dict(latents=latents))[0].transpose(1, 2, 0)

    def _run_vae(self, part: str, inputs: dict) -> np.ndarray:
        """The output of the VAE's decoder ("vae") or encoder ("vae_encoder"). Should the float16 VAE overflow
        (a NaN), the whole VAE goes to float32 (the encoder rebuilt when next used) and the part runs again."""
        out, = getattr(self, part)(inputs)
        if self.vae_dtype != "float32" and not np.isfinite(out).all():
            print("the float16 VAE overflowed: running it in float32", file=sys.stderr)
            self.vae_dtype, self.vae = "float32", self.build_vae("float32")
            self.vae_encoder = None if part == "vae" else self.build_vae_encoder("float32")
            out, = getattr(self, part)(inputs)
        return out
