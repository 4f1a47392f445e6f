"""samples/fetch_data.py: the manifest matches the shared sample data, and fetching keeps, copies and downloads
only checked files. No network: downloads are served from the local copy (or corrupted on purpose)."""

import hashlib
import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

SAMPLES = Path(__file__).resolve().parent.parent / "samples"
SHARED = Path(os.environ.get("DIRECTML_SAMPLE_DATA") or SAMPLES.parent.parent / "shared" / "sample-data")


def load_fetch_data():
    spec = importlib.util.spec_from_file_location("dml_fetch_data", SAMPLES / "fetch_data.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


fetch_data = load_fetch_data()


@pytest.fixture(scope="module")
def shared() -> Path:
    if not SHARED.is_dir():
        pytest.skip(f"the shared sample data {SHARED} is not here")
    return SHARED


def test_manifest_lists_every_shared_file_with_its_sha256(shared):
    entries = {e.path: e for e in fetch_data.read_manifest()}
    files = {str(p.relative_to(shared)) for p in shared.rglob("*") if p.is_file()}
    assert files <= set(entries), sorted(files - set(entries))[:5]
    for name in files:
        entry = entries[name]
        assert entry.algorithm == "sha256"
        assert hashlib.sha256((shared / name).read_bytes()).hexdigest() == entry.digest, name
    # Beyond the shared copy: mobilenet's classifier, pinned by the upstream tree's blob id.
    extra = {name: e for name, e in entries.items() if name not in files}
    assert set(extra) == {"mobile_net_data/mobilenetv20_output_pred_weight.npy"}
    assert extra["mobile_net_data/mobilenetv20_output_pred_weight.npy"].algorithm == "git-blob"


def test_git_blob_digest_is_gits(tmp_path):
    f = tmp_path / "f"
    f.write_bytes(b"hello\n")
    # `git hash-object` of "hello\n"
    assert fetch_data.digest(f, "git-blob") == "ce013625030ba8dba906f756967f9e9ca394464a"


def test_urls_point_at_the_pinned_upstream_tree():
    entries = {e.path: e for e in fetch_data.read_manifest()}
    base = "https://raw.githubusercontent.com/microsoft/DirectML/a9614e82c9226b09826d18c5e63926a774ca5ab5/"
    assert entries["candy_tensor_data/convolution_W.npy"].url == base + "Python/samples/candy_tensor_data/convolution_W.npy"
    assert entries["LICENSE.upstream"].url == base + "LICENSE"


def some_entries(shared):
    entries = fetch_data.read_manifest()
    return [e for e in entries if e.path.startswith("super_resolution_10_data/") or e.path == "dog2.jpg"]


def test_fetch_copies_then_keeps_and_never_downloads_what_a_source_has(shared, tmp_path):
    entries = some_entries(shared)

    def no_network(url, destination):
        raise AssertionError(f"downloaded {url}")

    counts = fetch_data.fetch(tmp_path, [shared], entries, get=no_network, log=lambda _: None)
    assert counts == {"kept": 0, "copied": len(entries), "downloaded": 0}
    assert all(fetch_data.matches(tmp_path / e.path, e) for e in entries)
    counts = fetch_data.fetch(tmp_path, [shared], entries, get=no_network, log=lambda _: None)
    assert counts == {"kept": len(entries), "copied": 0, "downloaded": 0}


def test_fetch_replaces_a_corrupted_file_and_downloads_what_no_source_has(shared, tmp_path):
    entries = some_entries(shared)
    (tmp_path / "dog2.jpg").write_bytes(b"not the image")
    served = []

    def serve_from_shared(url, destination):  # a download, answered from the local copy
        served.append(url)
        name = url.split("/Python/samples/", 1)[1]
        shutil.copyfile(shared / name, destination)

    counts = fetch_data.fetch(tmp_path, [], entries, get=serve_from_shared, log=lambda _: None)
    assert counts == {"kept": 0, "copied": 0, "downloaded": len(entries)}
    assert len(served) == len(entries) and all(u.startswith(fetch_data.UPSTREAM) for u in served)
    assert (tmp_path / "dog2.jpg").read_bytes() == (shared / "dog2.jpg").read_bytes()


def test_a_download_with_the_wrong_digest_is_refused_and_leaves_nothing(shared, tmp_path):
    entry = next(e for e in fetch_data.read_manifest() if e.path == "dog2.jpg")

    def corrupt(url, destination):
        destination.write_bytes(b"truncated")

    with pytest.raises(RuntimeError, match="dog2.jpg: the download from .* has sha256 .*nothing was written"):
        fetch_data.fetch(tmp_path, [], [entry], get=corrupt, log=lambda _: None)
    assert list(tmp_path.iterdir()) == []  # no partial file, no temporary folder


def test_default_folder_is_the_env_then_the_cache(monkeypatch, tmp_path):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("DIRECTML_SAMPLE_DATA", str(tmp_path / "env"))
    assert fetch_data.default_data_dir() == tmp_path / "env"
    monkeypatch.delenv("DIRECTML_SAMPLE_DATA")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    (tmp_path / "cache" / "directml" / "sample-data").mkdir(parents=True)
    assert fetch_data.default_data_dir() == tmp_path / "cache" / "directml" / "sample-data"


def test_program_fills_the_folder_from_a_local_copy(shared, tmp_path):
    result = subprocess.run([sys.executable, str(SAMPLES / "fetch_data.py"), "--data", str(tmp_path / "d"),
                             "--from", str(shared)], capture_output=True, text=True, timeout=300)
    # Everything but the classifier comes from the copy; the classifier needs the network, absent here.
    assert (tmp_path / "d" / "mnist-8_tensor_data").is_dir()
    if result.returncode != 0:
        assert result.stdout.count("downloading") == 1 and "mobilenetv20_output_pred_weight" in result.stdout
        assert result.stderr.startswith("error: mobile_net_data/mobilenetv20_output_pred_weight.npy: cannot download")
        assert "Traceback" not in result.stderr
