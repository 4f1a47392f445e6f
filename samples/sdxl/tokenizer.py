"""CLIP's tokenizer on the `tokenizers` library: byte-level BPE with an end-of-word suffix, 77 tokens per prompt.

A diffusers folder carries the vocabulary (tokenizer/vocab.json, merges.txt). A single checkpoint file does not:
then the vocabulary comes from `bpe_simple_vocab_16e6.txt.gz`, the file OpenAI's CLIP released under the MIT
license, as the `open_clip_torch` wheel on PyPI ships it (MIT license too). `fetch_vocabulary()` downloads that
wheel once with `pip download --no-deps`, takes the one file out of it and caches it (DIRECTML_SDXL_CACHE, else
~/.cache/directml-sdxl); nothing of it is part of this repository.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import numpy as np
from tokenizers import Regex, Tokenizer, models, normalizers, pre_tokenizers

LENGTH = 77  # CLIP's context: start-of-text, 75 tokens, end-of-text (then padding)
START, END = "<|startoftext|>", "<|endoftext|>"
OPEN_CLIP_WHEEL = "open_clip_torch==3.3.0"
VOCABULARY_FILE = "bpe_simple_vocab_16e6.txt.gz"
VOCABULARY_SHA256 = "924691ac288e54409236115652ad4aa250f48203de50a9e4722a6ecd48d6804a"
MERGES = 49152 - 256 - 2  # the released file has more lines than CLIP's vocabulary uses
# CLIP's pre-tokenizer: contractions, runs of letters, single digits, runs of other non-space characters.
WORDS = r"""'s|'t|'re|'ve|'m|'ll|'d|[\p{L}]+|[\p{N}]|[^\s\p{L}\p{N}]+"""


def byte_symbols() -> list[str]:
    """The 256 printable characters byte-level BPE stands for the bytes 0..255 with (GPT-2's table): printable
    Latin-1 bytes stand for themselves, the others for code points from 256 up, in byte order."""
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    others = [b for b in range(256) if b not in printable]
    return [chr(b) for b in printable] + [chr(256 + i) for i in range(len(others))]


def cache_dir() -> Path:
    return Path(os.environ.get("DIRECTML_SDXL_CACHE", Path.home() / ".cache" / "directml-sdxl"))


def fetch_vocabulary() -> Path:
    """The cached bpe_simple_vocab_16e6.txt.gz, fetched from the open_clip_torch wheel the first time."""
    path = cache_dir() / VOCABULARY_FILE
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory() as tmp:
            subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--quiet", "-d", tmp,
                            OPEN_CLIP_WHEEL], check=True)
            wheel, = Path(tmp).glob("*.whl")
            data = zipfile.ZipFile(wheel).read(f"open_clip/{VOCABULARY_FILE}")
        if hashlib.sha256(data).hexdigest() != VOCABULARY_SHA256:
            raise RuntimeError(f"{VOCABULARY_FILE} from {OPEN_CLIP_WHEEL} is not the expected file")
        path.write_bytes(data)
    return path


def open_clip_vocabulary(path: Path) -> tuple[dict[str, int], list[tuple[str, str]]]:
    """CLIP's vocabulary and merges from the released merges file: the byte symbols, the same with the
    end-of-word suffix, one token per merge, then the two special tokens (49408 in all)."""
    lines = gzip.open(path, "rt", encoding="utf-8").read().split("\n")[1:MERGES + 1]
    merges = [tuple(line.split()) for line in lines]
    symbols = byte_symbols()
    tokens = symbols + [s + "</w>" for s in symbols] + ["".join(m) for m in merges] + [START, END]
    return {t: i for i, t in enumerate(tokens)}, merges


class ClipTokenizer:
    """prompts -> token ids [B, 77] (int32), padded with `pad_token` after the end-of-text token."""

    def __init__(self, vocab: dict[str, int], merges: list[tuple[str, str]], pad_token: str):
        self.tokenizer = Tokenizer(models.BPE(vocab, merges, unk_token=END, end_of_word_suffix="</w>",
                                              continuing_subword_prefix="", fuse_unk=False))
        self.tokenizer.normalizer = normalizers.Sequence(
            [normalizers.NFC(), normalizers.Replace(Regex(r"\s+"), " "), normalizers.Lowercase()])
        self.tokenizer.pre_tokenizer = pre_tokenizers.Sequence(
            [pre_tokenizers.Split(Regex(WORDS), behavior="removed", invert=True),
             pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
        # As in transformers' CLIP tokenizers, the special tokens (the padding one included: SDXL's "!") match
        # whole in a prompt before BPE, so "!!" is two "!" tokens there.
        self.tokenizer.add_special_tokens([START, END, pad_token])
        self.start, self.end, self.pad = vocab[START], vocab[END], vocab[pad_token]

    @classmethod
    def from_folder(cls, folder: Path) -> "ClipTokenizer":
        """A diffusers / transformers tokenizer folder: vocab.json and merges.txt (or, as transformers 5 saves
        it, tokenizer.json), and the padding token from special_tokens_map.json or tokenizer_config.json (CLIP-L
        pads with end-of-text, SDXL's bigG tokenizer with "!")."""
        if (folder / "vocab.json").exists():
            vocab = json.loads((folder / "vocab.json").read_text(encoding="utf-8"))
            lines = (folder / "merges.txt").read_text(encoding="utf-8").split("\n")
            merges = [tuple(line.split()) for line in lines if line and not line.startswith("#version")]
        else:
            model = json.loads((folder / "tokenizer.json").read_text(encoding="utf-8"))["model"]
            vocab = model["vocab"]
            merges = [tuple(m.split() if isinstance(m, str) else m) for m in model["merges"]]
        pad = END
        for name in ("special_tokens_map.json", "tokenizer_config.json"):
            if (folder / name).exists() and "pad_token" in (found := json.loads((folder / name).read_text())):
                pad = found["pad_token"]["content"] if isinstance(found["pad_token"], dict) else found["pad_token"]
                break
        return cls(vocab, merges, pad)

    @classmethod
    def from_open_clip_vocabulary(cls, pad_token: str) -> "ClipTokenizer":
        return cls(*open_clip_vocabulary(fetch_vocabulary()), pad_token)

    def __call__(self, prompts: list[str]) -> np.ndarray:
        ids = np.full((len(prompts), LENGTH), self.pad, np.int32)
        for row, prompt in zip(ids, prompts):
            tokens = [self.start, *self.tokenizer.encode(prompt, add_special_tokens=False).ids[:LENGTH - 2], self.end]
            row[:len(tokens)] = tokens
        return ids

    def end_positions(self, ids: np.ndarray) -> np.ndarray:
        """Each row's first end-of-text position (where the pooled embedding is read)."""
        return (ids == self.end).argmax(axis=1)
