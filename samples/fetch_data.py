"""Fetches the model samples' data: Microsoft's DirectML sample weights and images (MIT license).

The files are those of the Python samples in the microsoft/DirectML repository (Python/samples/, at the commit
pinned below), mobilenet's classifier weight among them; sample_data.manifest beside this file lists each with its
digest. A file already in the target folder is kept when its digest matches; one found in a local copy (--from,
default ../shared/sample-data beside the repository) is copied from there; the rest are downloaded. Every file is
checked before it is put in place, so an interrupted or corrupted download never lands in the folder.
The target is where the samples look by default: $DIRECTML_SAMPLE_DATA, else ~/.cache/directml/sample-data.
Run: python samples/fetch_data.py [--data DIR] [--from DIR]
"""

import argparse
import hashlib
import os
import shutil
import sys
import tempfile
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

DATA_ENV = "DIRECTML_SAMPLE_DATA"
# The project's shared copy beside the repository, where one exists.
SHARED_DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "sample-data"
UPSTREAM = "https://raw.githubusercontent.com/microsoft/DirectML/a9614e82c9226b09826d18c5e63926a774ca5ab5/"
MANIFEST = Path(__file__).resolve().with_name("sample_data.manifest")


def cache_dir() -> Path:
    """Where this script puts the data by default: the user's cache ($XDG_CACHE_HOME, else ~/.cache)."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "directml" / "sample-data"


def default_data_dir() -> Path:
    """Where the samples look without --data: $DIRECTML_SAMPLE_DATA, else what this script fetched, else the shared
    copy."""
    if os.environ.get(DATA_ENV):
        return Path(os.environ[DATA_ENV])
    return cache_dir() if cache_dir().is_dir() or not SHARED_DATA.is_dir() else SHARED_DATA


@dataclass(frozen=True)
class Entry:
    algorithm: str  # "sha256", or "git-blob" (Git's SHA-1 of the blob) where only the upstream tree pins the file
    digest: str
    path: str       # relative to the data folder

    @property
    def url(self) -> str:
        return UPSTREAM + ("LICENSE" if self.path == "LICENSE.upstream" else "Python/samples/" + self.path)


def read_manifest(path: Path = MANIFEST) -> list[Entry]:
    entries = []
    for line in path.read_text().splitlines():
        if line and not line.startswith("#"):
            algorithm, digest, name = line.split(maxsplit=2)
            entries.append(Entry(algorithm, digest, name))
    return entries


def digest(path: Path, algorithm: str) -> str:
    if algorithm == "sha256":
        h = hashlib.sha256()
    elif algorithm == "git-blob":
        h = hashlib.sha1(b"blob %d\0" % path.stat().st_size)
    else:
        raise ValueError(f"unknown digest algorithm {algorithm!r} in {MANIFEST.name}")
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def matches(path: Path, entry: Entry) -> bool:
    return path.is_file() and digest(path, entry.algorithm) == entry.digest


def download(url: str, destination: Path) -> None:
    with urllib.request.urlopen(url, timeout=60) as response, destination.open("wb") as out:
        shutil.copyfileobj(response, out)


def fetch(target: Path, sources: list[Path], entries: list[Entry],
          get: Callable[[str, Path], None] = download, log: Callable[[str], None] = print) -> dict[str, int]:
    """Puts every entry in `target`, checked: kept if already there, else copied from the first source that has it
    right, else fetched with get(url, file). Returns how many were kept, copied and downloaded. A download whose
    digest differs raises RuntimeError naming the file; nothing unchecked is left in `target`."""
    counts = {"kept": 0, "copied": 0, "downloaded": 0}
    for entry in entries:
        destination = target / entry.path
        if matches(destination, entry):
            counts["kept"] += 1
            continue
        destination.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=destination.parent) as tmp:
            staged = Path(tmp) / destination.name
            source = next((s / entry.path for s in sources if matches(s / entry.path, entry)), None)
            if source is not None:
                shutil.copyfile(source, staged)
                counts["copied"] += 1
            else:
                log(f"downloading {entry.path}")
                try:
                    get(entry.url, staged)
                except OSError as e:  # urllib's errors are OSErrors
                    raise RuntimeError(f"{entry.path}: cannot download {entry.url}: {e}") from None
                if not matches(staged, entry):
                    raise RuntimeError(f"{entry.path}: the download from {entry.url} has {entry.algorithm} "
                                       f"{digest(staged, entry.algorithm)}, not {entry.digest} as "
                                       f"{MANIFEST.name} says; nothing was written")
                counts["downloaded"] += 1
            os.replace(staged, destination)
    return counts


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", type=Path, default=None,
                   help=f"the folder to fill (default: ${DATA_ENV}, else {cache_dir()})")
    p.add_argument("--from", dest="source", type=Path, action="append", default=None,
                   help=f"a local copy to take checked files from first (default: {SHARED_DATA} if it exists)")
    args = p.parse_args()
    target = args.data or (Path(os.environ[DATA_ENV]) if os.environ.get(DATA_ENV) else cache_dir())
    sources = args.source if args.source is not None else [SHARED_DATA] if SHARED_DATA.is_dir() else []
    try:
        counts = fetch(target, sources, read_manifest())
    except (OSError, RuntimeError) as e:
        sys.exit(f"error: {e}")
    print(f"{target}: {counts['kept']} files already there, {counts['copied']} copied, "
          f"{counts['downloaded']} downloaded; all checked against {MANIFEST.name}")


if __name__ == "__main__":
    main()
