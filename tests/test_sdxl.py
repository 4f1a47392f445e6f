"""The SDXL sample (samples/sdxl) against diffusers, on a tiny SDXL-shaped model (tests/sdxl_tiny.py) read
through the sample's own loaders in both layouts (diffusers folder, single checkpoint file). diffusers' outputs
for the same weights are in tests/data/sdxl_reference.npz (tests/sdxl_reference.py wrote them)."""

import gc
import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import directml as dml

pytest.importorskip("safetensors")
pytest.importorskip("tokenizers")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "samples" / "sdxl"))

import sdxl_tiny as tiny  # noqa: E402
from sdxl_tiny import (GUIDANCE, IMG2IMG_STARTS, IMG2IMG_STEPS, IMG2IMG_STRENGTH, NEGATIVE, ODD_LATENTS,  # noqa: E402
                       PROMPT, STEPS, UNET_TIMESTEP)
from pipeline import EulerDiscrete, Pipeline, img2img_start  # noqa: E402
from tokenizer import fetch_vocabulary  # noqa: E402
from weights import load  # noqa: E402

REFERENCE = dict(np.load(tiny.REFERENCE))
TOLERANCE = dict(rtol=1e-4, atol=1e-4)  # float32 throughout; the networks' outputs are of size ~1


@pytest.fixture(scope="module")
def vocabulary():
    """CLIP's BPE merges file, from the open_clip_torch wheel on PyPI (cached; pip's own settings apply, so
    PIP_NO_INDEX=1 PIP_FIND_LINKS=DIR takes the wheel from DIR offline)."""
    try:
        return fetch_vocabulary()
    except (subprocess.CalledProcessError, OSError) as e:
        pytest.skip(f"CLIP's vocabulary could not be fetched from PyPI: {e}")


@pytest.fixture(scope="module")
def model_files(tmp_path_factory, vocabulary):
    root = tmp_path_factory.mktemp("sdxl")
    return dict(folder=tiny.write_folder(root / "tiny-sdxl"), single=tiny.write_single_file(root / "tiny-sdxl.safetensors"))


@pytest.fixture(scope="module", params=["folder", "single"])
def pipeline(request, model_files, device):
    model = load(model_files[request.param])
    return Pipeline(model, device, tiny.HEIGHT, tiny.WIDTH, unet_dtype="float32", text_dtype="float32",
                    vae_dtype="float32")


def added_features(pipeline, pooled):
    _, added = pipeline.encode(PROMPT, NEGATIVE)
    return np.concatenate([pooled, added[:, pooled.shape[1]:]], axis=1)


@pytest.mark.parametrize("spacing", ["leading", "trailing", "linspace"])
def test_euler_schedule(spacing):
    """Timesteps, sigmas and the initial noise scale as diffusers' EulerDiscreteScheduler gives them (float32
    cumulative products in another order: within 1e-5)."""
    scheduler = EulerDiscrete(dict(tiny.SCHEDULER, timestep_spacing=spacing), 20)
    np.testing.assert_array_equal(scheduler.timesteps, REFERENCE[f"timesteps_{spacing}"])
    np.testing.assert_allclose(scheduler.sigmas, REFERENCE[f"sigmas_{spacing}"], rtol=1e-5)
    np.testing.assert_allclose(scheduler.init_noise_sigma, REFERENCE[f"init_noise_sigma_{spacing}"], rtol=1e-5)


def test_tokens(pipeline):
    np.testing.assert_array_equal(pipeline.model.tokenizer([NEGATIVE, PROMPT]), REFERENCE["ids_0"])
    np.testing.assert_array_equal(pipeline.model.tokenizer_2([NEGATIVE, PROMPT]), REFERENCE["ids_1"])


def test_prompt_embeddings(pipeline):
    context, added = pipeline.encode(PROMPT, NEGATIVE)
    np.testing.assert_allclose(context, REFERENCE["context"], **TOLERANCE)
    pooled = REFERENCE["pooled"]
    np.testing.assert_allclose(added[:, :pooled.shape[1]], pooled, **TOLERANCE)


def test_empty_negative_prompt_is_zeros(pipeline):
    context, added = pipeline.encode(PROMPT, "")
    pooled = REFERENCE["pooled"].shape[1]
    assert not context[0].any() and not added[0, :pooled].any()
    np.testing.assert_allclose(context[1], REFERENCE["context"][1], **TOLERANCE)
    np.testing.assert_array_equal(added[0, pooled:], added[1, pooled:])  # the size conditions stay


def test_unet_call(pipeline):
    added = added_features(pipeline, REFERENCE["pooled"])
    out = pipeline.unet_call(REFERENCE["unet_sample"], UNET_TIMESTEP, REFERENCE["context"], added)
    np.testing.assert_allclose(out, REFERENCE["unet_output"], **TOLERANCE)


def test_unet_call_odd_latents(model_files, device):
    """Latents that do not divide by 4: the up path's upsampling crops to the skips' odd sizes."""
    h, w = ODD_LATENTS
    pipeline = Pipeline(load(model_files["folder"]), device, 2 * h, 2 * w, unet_dtype="float32",
                        text_dtype="float32", vae_dtype="float32")
    added = added_features(pipeline, REFERENCE["pooled"])
    out = pipeline.unet_call(REFERENCE["unet_odd_sample"], UNET_TIMESTEP, REFERENCE["context"], added)
    np.testing.assert_allclose(out, REFERENCE["unet_odd_output"], **TOLERANCE)


def test_denoise_and_decode(pipeline):
    context, added = pipeline.encode(PROMPT, "")
    latents = REFERENCE["noise"] * EulerDiscrete(pipeline.model.scheduler, STEPS).init_noise_sigma
    steps = []
    final = pipeline.denoise(latents, context, added, STEPS, GUIDANCE, each_step=lambda i, x: steps.append(x.numpy()))
    np.testing.assert_allclose(np.stack(steps), REFERENCE["step_latents"], rtol=1e-4, atol=2e-4)
    np.testing.assert_allclose(pipeline.decode(final), REFERENCE["image"], **TOLERANCE)


def img2img_input() -> np.ndarray:
    return REFERENCE["img2img_input"].astype(np.float32) / 255


def test_img2img_start():
    """The steps img2img keeps for a strength: diffusers' get_timesteps' cut; none kept or out of [0, 1] is an
    error."""
    for (steps, strength), start in zip(IMG2IMG_STARTS, REFERENCE["img2img_starts"]):
        assert img2img_start(steps, strength) == start, (steps, strength)
    for steps, strength in ((20, 0.04), (3, 0.3), (20, 0.0)):
        with pytest.raises(ValueError, match="keeps none"):
            img2img_start(steps, strength)
    for strength in (-0.1, 1.5):
        with pytest.raises(ValueError, match=r"in \[0, 1\]"):
            img2img_start(20, strength)


def test_vae_encoder(pipeline):
    """The posterior's mean (no noise), and its sample for given noise: mean + exp(logvar / 2) noise, times
    scaling_factor."""
    scale = tiny.VAE["scaling_factor"]
    np.testing.assert_allclose(pipeline.image_latents(img2img_input(), None), REFERENCE["vae_mean"] * scale,
                               **TOLERANCE)
    noise = REFERENCE["posterior_noise"]
    expected = (REFERENCE["vae_mean"] + np.exp(0.5 * REFERENCE["vae_logvar"]) * noise) * scale
    np.testing.assert_allclose(pipeline.image_latents(img2img_input(), noise), expected, **TOLERANCE)
    with pytest.raises(ValueError, match="pipeline's size"):
        pipeline.image_latents(img2img_input()[:, :8], None)


def test_img2img(pipeline):
    """diffusers' StableDiffusionXLImg2ImgPipeline with the same noise: the latents after each kept step, and
    the image."""
    context, added = pipeline.encode(PROMPT, "")
    start = img2img_start(IMG2IMG_STEPS, IMG2IMG_STRENGTH)
    sigma = EulerDiscrete(pipeline.model.scheduler, IMG2IMG_STEPS).sigmas[start]
    latents = pipeline.image_latents(img2img_input(), REFERENCE["posterior_noise"]) + REFERENCE["img2img_noise"] * sigma
    steps = []
    final = pipeline.denoise(latents, context, added, IMG2IMG_STEPS, GUIDANCE, start=start,
                             each_step=lambda i, x: steps.append(x.numpy()))
    np.testing.assert_allclose(np.stack(steps), REFERENCE["img2img_step_latents"], rtol=1e-4, atol=2e-4)
    np.testing.assert_allclose(pipeline.decode(final), REFERENCE["img2img_image"], **TOLERANCE)


def test_float16(model_files, device):
    """The float16 UNet and text encoders (the defaults) stay near diffusers' float32 image, with the VAE in
    float16 (the default but on directml, its activations scaled by 1/32) and in float32."""
    pipeline = Pipeline(load(model_files["folder"]), device, tiny.HEIGHT, tiny.WIDTH)
    context, added = pipeline.encode(PROMPT, "")
    latents = REFERENCE["noise"] * EulerDiscrete(pipeline.model.scheduler, STEPS).init_noise_sigma
    latents = pipeline.denoise(latents, context, added, STEPS, GUIDANCE)
    np.testing.assert_allclose(pipeline.decode(latents), REFERENCE["image"], atol=2e-2)
    image, = pipeline.build_vae("float32")(dict(latents=latents))
    np.testing.assert_allclose(image[0].transpose(1, 2, 0), REFERENCE["image"], atol=2e-2)
    mean = pipeline.image_latents(img2img_input(), None)  # the float16 encoder, activations scaled
    np.testing.assert_allclose(mean, REFERENCE["vae_mean"] * tiny.VAE["scaling_factor"], atol=1e-2)


def test_tokenizer_json_folder(tmp_path, vocabulary):
    """A tokenizer folder as transformers 5 saves it (tokenizer.json, padding in tokenizer_config.json)."""
    from tokenizer import ClipTokenizer, open_clip_vocabulary
    vocab, merges = open_clip_vocabulary(vocabulary)
    (tmp_path / "tokenizer.json").write_text(json.dumps({"model": {"vocab": vocab, "merges": [list(m) for m in merges]}}))
    (tmp_path / "tokenizer_config.json").write_text(json.dumps({"pad_token": "!"}))
    np.testing.assert_array_equal(ClipTokenizer.from_folder(tmp_path)([NEGATIVE, PROMPT]), REFERENCE["ids_1"])


def test_single_file_configuration_matches_folder(model_files):
    folder, single = load(model_files["folder"]), load(model_files["single"])
    for key in ("block_out_channels", "layers_per_block", "attention_head_dim", "transformer_layers_per_block",
                "down_block_types", "up_block_types", "addition_time_embed_dim"):
        assert list(np.atleast_1d(single.unet.config[key])) == list(np.atleast_1d(folder.unet.config[key])), key
    assert set(single.unet.weights) == set(folder.unet.weights)
    assert set(single.vae.weights) == set(folder.vae.weights)
    for name in ("text_encoder", "text_encoder_2"):
        a, b = getattr(single, name), getattr(folder, name)
        assert set(a.weights) == set(b.weights)
        for key in ("hidden_act", "num_attention_heads", "num_hidden_layers"):
            assert a.config[key] == b.config[key], (name, key)


def mapped(path) -> bool:
    return str(path) in Path("/proc/self/maps").read_text()


@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="reads Linux's /proc/self/maps")
def test_weight_files_unmapped_with_the_pipeline(tmp_path, vocabulary, device):
    """The graphs lend the mapped weights as constants (no copy in the process's memory): the files stay mapped
    while the pipeline may need them, and not after it is gone."""
    folder = tiny.write_folder(tmp_path / "model")
    model = load(folder)
    assert not mapped(folder)
    pipeline = Pipeline(model, device, tiny.HEIGHT, tiny.WIDTH)
    context, added = pipeline.encode(PROMPT, NEGATIVE)
    assert np.isfinite(context).all()
    del pipeline
    gc.collect()
    assert not mapped(folder)


@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="reads Linux's /proc/self/maps")
def test_weight_reads_are_views_of_the_mapped_file(tmp_path):
    """A read is a read-only view of the file's memory map: the bytes the file holds, copied nowhere. Inside held()
    the file is opened and mapped once, at its first read (`in` reads nothing); it stays mapped while an array read
    from it is alive, and no longer."""
    folder = tiny.write_folder(tmp_path / "model")
    weights = load(folder).unet.weights
    with weights.held():
        assert "conv_in.weight" in weights and "no.such.weight" not in weights
        assert not mapped(folder)
        first = weights["conv_in.weight"]
        assert mapped(folder)
        with weights.held():  # nested: the outer block's file serves the inner block's reads
            again = weights["conv_in.weight"]
            assert np.shares_memory(again, first)
        assert weights.shape("conv_in.weight") == first.shape
    np.testing.assert_array_equal(first, tiny.weight("unet.conv_in.weight", first.shape))
    assert not first.flags.writeable
    with pytest.raises(ValueError, match="read-only"):
        first[...] = 0
    assert mapped(folder)  # `first` and `again` view the map
    del first, again
    assert not mapped(folder)
    alone = weights["conv_in.weight"]  # outside held(): a map of its own, alive with the array
    assert mapped(folder)
    del alone
    assert not mapped(folder)


def write_safetensors(path, tensors, data):
    """A safetensors file written by hand: `tensors` its header's entries, `data` the bytes after the header."""
    header = json.dumps(tensors).encode()
    header += b" " * (-len(header) % 8)
    path.write_bytes(len(header).to_bytes(8, "little") + header + data)


def test_weights_of_every_dtype(tmp_path):
    """Tensors of every type NumPy holds, and an empty one, read back exactly; bfloat16, which NumPy lacks, is
    refused by name."""
    from safetensors.numpy import save_file
    from weights import SAFETENSORS_DTYPES, SafetensorsFile
    rng = np.random.default_rng(0)
    arrays = {f"t{i}": (rng.standard_normal((3, i + 1)) * 10).astype(t)
              for i, t in enumerate(SAFETENSORS_DTYPES.values())}
    arrays["empty"] = np.zeros((0, 4), np.float16)
    save_file(arrays, str(tmp_path / "all.safetensors"))
    file = SafetensorsFile(tmp_path / "all.safetensors")
    for name, want in arrays.items():
        got = file.tensor(name)
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got, want)
    # bfloat16, which NumPy lacks: the file written by hand (bfloat16's 1.0 is 0x3f80), no torch needed
    write_safetensors(tmp_path / "bf16.safetensors", {"w": dict(dtype="BF16", shape=[2, 2], data_offsets=[0, 8])},
                      b"\x80\x3f" * 4)
    with pytest.raises(ValueError, match="'w' is BF16"):
        SafetensorsFile(tmp_path / "bf16.safetensors")


def test_weights_at_unaligned_offsets(tmp_path, device):
    """Another writer may leave a tensor at an offset that is not a multiple of its element size (the safetensors
    library's own writer sorts tensors by alignment): its view is unaligned, reads back exactly, and a graph takes
    it as a constant (copied where the view cannot be lent)."""
    from weights import SafetensorsFile
    a, b = np.arange(3, dtype=np.uint8), np.linspace(-1, 1, 6, dtype=np.float32).reshape(1, 1, 2, 3)
    path = tmp_path / "unaligned.safetensors"
    write_safetensors(path, {"a": dict(dtype="U8", shape=[3], data_offsets=[0, 3]),
                             "b": dict(dtype="F32", shape=[1, 1, 2, 3], data_offsets=[3, 27])},
                      a.tobytes() + b.tobytes())
    file = SafetensorsFile(path)
    got = file.tensor("b")
    assert not got.flags.aligned
    np.testing.assert_array_equal(file.tensor("a"), a)
    np.testing.assert_array_equal(got, b)
    g = dml.Graph(device)
    (out,) = g.compile([g.constant(got, copy=None) * 2.0])()
    np.testing.assert_array_equal(out, b * 2)


def test_size_must_fit_the_vae(model_files, device):
    with pytest.raises(ValueError, match="multiple of 2"):
        Pipeline(load(model_files["folder"]), device, tiny.HEIGHT + 1, tiny.WIDTH)


def test_missing_weights(tmp_path):
    (tmp_path / "unet").mkdir()
    with pytest.raises(FileNotFoundError, match="safetensors"):
        load(tmp_path)


@pytest.mark.parametrize("part", ["decoder", "encoder"])
def test_float16_vae_overflow_falls_back_to_float32(model_files, device, directml_differs, monkeypatch, capsys,
                                                     part):
    """A scale that overflows float16 (the stream times 2^16) gives NaNs: the decoder (or the encoder) runs again
    in float32, and so does the other half from then on."""
    if part == "decoder":
        directml_differs("the overflowing float16 decoder gives a finite, wrong image, not NaNs (lavapipe and the "
                         "H200), so the fallback does not start: the sample's VAE is float32 on directml")
    import pipeline as pipeline_module
    monkeypatch.setattr(pipeline_module, "VAE_FLOAT16_SCALE", 2.0 ** 16)
    pipeline = Pipeline(load(model_files["folder"]), device, tiny.HEIGHT, tiny.WIDTH, vae_dtype="float16")
    mean = REFERENCE["vae_mean"] * tiny.VAE["scaling_factor"]
    if part == "encoder":
        np.testing.assert_allclose(pipeline.image_latents(img2img_input(), None), mean, **TOLERANCE)
    image = pipeline.decode(REFERENCE["step_latents"][-1])
    assert "overflowed" in capsys.readouterr().err and pipeline.vae_dtype == "float32"
    np.testing.assert_allclose(image, REFERENCE["image"], **TOLERANCE)
    np.testing.assert_allclose(pipeline.image_latents(img2img_input(), None), mean, **TOLERANCE)


def test_generate_command(model_files, device, monkeypatch, tmp_path, capsys):
    """generate.py end to end on the single file: a PNG of the asked size, and the stages' times."""
    from PIL import Image
    import generate
    out = tmp_path / "image.png"
    monkeypatch.setattr(sys, "argv", ["generate.py", PROMPT, "--model", str(model_files["single"]), "--size",
                                      f"{tiny.WIDTH}x{tiny.HEIGHT}", "--steps", "1", "--device", device.kind,
                                      "--output", str(out)])
    generate.main()
    assert Image.open(out).size == (tiny.WIDTH, tiny.HEIGHT)
    printed = capsys.readouterr().out
    assert "denoise" in printed and "vae decode" in printed


def test_generate_img2img_command(model_files, device, monkeypatch, tmp_path, capsys):
    """generate.py --image on the folder: the image's size cut to multiples of 8 (27x35 -> 24x32), the VAE
    encoder's stage timed."""
    from PIL import Image
    import generate
    source, out = tmp_path / "in.png", tmp_path / "out.png"
    Image.fromarray(np.resize(REFERENCE["img2img_input"], (35, 27, 3))).save(source)
    monkeypatch.setattr(sys, "argv", ["generate.py", PROMPT, "--model", str(model_files["folder"]), "--image",
                                      str(source), "--strength", "0.5", "--steps", "2", "--device", device.kind,
                                      "--output", str(out)])
    generate.main()
    assert Image.open(out).size == (24, 32)
    printed = capsys.readouterr()
    assert "vae encode" in printed.out and "1/1 steps" in printed.err  # strength 0.5 keeps 1 of the 2 steps


@pytest.mark.parametrize("arguments, message", [(["--strength", "0.5"], "goes with --image"),
                                                (["--image", "in.png", "--strength", "0.01"], "keeps none"),
                                                (["--image", "in.png", "--strength", "2"], r"in \[0, 1\]")])
def test_generate_img2img_arguments(monkeypatch, capsys, arguments, message):
    """Bad img2img arguments are argparse errors before anything loads."""
    import generate
    monkeypatch.setattr(sys, "argv", ["generate.py", PROMPT, "--model", "nowhere", *arguments])
    with pytest.raises(SystemExit):
        generate.main()
    assert re.search(message, capsys.readouterr().err)


@pytest.mark.parametrize("size", ["1001", "0", "64x", "12x8", "-8", "8x8x8"])
def test_generate_sizes(size):
    import argparse
    import generate
    assert generate.image_size("1024") == (1024, 1024) and generate.image_size("1152X896") == (1152, 896)
    with pytest.raises(argparse.ArgumentTypeError, match="multiples of 8"):
        generate.image_size(size)
