"""Hostile or damaged model archives are refused in one line and write nothing outside their folder."""

from __future__ import annotations

import io
import pickle
import tarfile
import tempfile
from pathlib import Path

import pytest
import torch
from support.cli import run_cli
from support.configs import text_config, write_config
from support.data import sentiment_records, write_jsonl

from distrain import load_archive
from distrain.experiment.archive.format import ArchiveError


@pytest.fixture(scope="module")
def archive(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("archive")
    data = {
        "train": write_jsonl(folder / "train.jsonl", sentiment_records(40, seed=1)),
        "validation": write_jsonl(folder / "validation.jsonl", sentiment_records(16, seed=2)),
    }
    config = write_config(folder / "config.json", text_config(data, num_epochs=1))
    result = run_cli("train", str(config), "-s", str(folder / "run"))
    assert result.returncode == 0, result.stderr
    return folder / "run" / "model.tar.gz"


@pytest.fixture
def scratch(tmp_path, monkeypatch) -> Path:
    """Archives are extracted under ``tmp_path/scratch``; ``tmp_path`` itself is "outside"."""
    folder = tmp_path / "scratch"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder


def repack(source: Path, target: Path, extra: list[tuple[tarfile.TarInfo, bytes | None]], replace: dict | None = None) -> Path:
    """A copy of the archive ``source`` with members replaced and hostile ``extra`` members added."""
    replace = replace or {}
    with tarfile.open(source) as original, tarfile.open(target, "w:gz") as copy:
        for member in original.getmembers():
            if member.name in replace:
                member.size = len(replace[member.name])
                copy.addfile(member, io.BytesIO(replace[member.name]))
            else:
                copy.addfile(member, original.extractfile(member) if member.isfile() else None)
        for info, content in extra:
            copy.addfile(info, io.BytesIO(content) if content is not None else None)
    return target


def file_member(name: str, content: bytes) -> tuple[tarfile.TarInfo, bytes]:
    info = tarfile.TarInfo(name)
    info.size = len(content)
    return info, content


def link_member(name: str, target: str, kind: bytes) -> tuple[tarfile.TarInfo, None]:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = target
    return info, None


def refused(path: Path) -> str:
    with pytest.raises(ArchiveError) as caught:
        load_archive(path)
    message = str(caught.value)
    assert "\n" not in message and str(path) in message
    return message


def test_a_good_archive_loads_model_config_and_vocabulary(archive):
    loaded = load_archive(archive)
    assert loaded.config["model"]["type"] == "basic_classifier"
    assert loaded.vocab.size("labels") == 2
    assert not loaded.model.training
    assert loaded.meta["archive_format"] == 1


def test_a_member_climbing_out_with_dotdot_is_refused_and_nothing_lands_outside(archive, tmp_path, scratch):
    hostile = repack(archive, tmp_path / "dotdot.tar.gz", [file_member("../../escaped.txt", b"gotcha")])
    assert "outside the archive folder" in refused(hostile)
    assert not (tmp_path / "escaped.txt").exists() and not (scratch / "escaped.txt").exists()


def test_an_absolute_member_path_is_refused(archive, tmp_path, scratch):
    target = tmp_path / "absolute.txt"
    hostile = repack(archive, tmp_path / "absolute.tar.gz", [file_member(str(target), b"gotcha")])
    assert "absolute path" in refused(hostile)
    assert not target.exists()


@pytest.mark.parametrize("kind", [tarfile.SYMTYPE, tarfile.LNKTYPE])
def test_links_are_refused_so_nothing_is_written_through_them(archive, tmp_path, scratch, kind):
    hostile = repack(archive, tmp_path / "link.tar.gz", [
        link_member("vocabulary/escape", str(tmp_path), kind),
        file_member("vocabulary/escape/escaped.txt", b"gotcha"),
    ])
    assert "links are not allowed" in refused(hostile)
    assert not (tmp_path / "escaped.txt").exists()


def test_a_truncated_archive_is_refused(archive, tmp_path, scratch):
    truncated = tmp_path / "truncated.tar.gz"
    truncated.write_bytes(archive.read_bytes()[: archive.stat().st_size * 2 // 3])
    assert "not a readable model archive" in refused(truncated)


class _WritesAFileWhenUnpickled:
    def __init__(self, path: Path) -> None:
        self.path = str(path)

    def __reduce__(self):
        return (open, (self.path, "w"))


@pytest.mark.parametrize("format", ["pickle", "torch.save"])
def test_weights_that_are_a_pickle_payload_are_never_unpickled(archive, tmp_path, scratch, format):
    marker = tmp_path / "pickle_ran.txt"
    payload = _WritesAFileWhenUnpickled(marker)
    if format == "pickle":
        content = pickle.dumps(payload)
    else:
        buffer = io.BytesIO()
        torch.save({"weight": payload}, buffer)
        content = buffer.getvalue()
    assert not marker.exists()
    hostile = repack(archive, tmp_path / "pickled.tar.gz", [], replace={"weights.safetensors": content})
    assert "weights.safetensors is not a safetensors file" in refused(hostile)
    assert not marker.exists()


def test_a_meta_json_from_a_newer_format_or_broken_is_refused(archive, tmp_path, scratch):
    newer = repack(archive, tmp_path / "newer.tar.gz", [], replace={"meta.json": b'{"archive_format": 99}'})
    assert "newer than this distrain reads" in refused(newer)
    broken = repack(archive, tmp_path / "broken.tar.gz", [], replace={"meta.json": b'{"archive_format": '})
    assert "meta.json is not valid JSON" in refused(broken)
