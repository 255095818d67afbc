"""Readers: memory-mapped windows for .npy / .bin / stored .npz members, streamed zip otherwise."""

from __future__ import annotations

import zipfile

import numpy as np
import pytest

from ascendify.compare import io
from ascendify.compare.engine import compare_collections
from ascendify.compare.io import open_collection
from ascendify.errors import AscendifyError


@pytest.fixture()
def small_windows(monkeypatch):
    monkeypatch.setattr(io, "MAP_WINDOW", 4096)  # several windows per test file


def _arr(n=10_000, seed=0):
    return np.random.default_rng(seed).standard_normal(n).astype(np.float32).reshape(100, -1)


def test_npy_is_read_in_mapped_windows(tmp_path, small_windows):
    a = _arr()
    np.save(tmp_path / "a.npy", a)
    chunks = list(open_collection(str(tmp_path / "a.npy")).refs["a"].chunks(300))
    assert np.array_equal(np.concatenate(chunks), a.reshape(-1))
    assert max(c.size for c in chunks) == 300
    # read-only views of the file (no copy), not fresh buffers
    assert not chunks[0].flags.writeable and chunks[0].base is not None


def test_raw_bin_is_read_in_mapped_windows(tmp_path, small_windows):
    a = _arr(seed=1)
    a.tofile(tmp_path / "out_0.bin")
    ref = open_collection(str(tmp_path / "out_0.bin"), bin_spec={"*": {"shape": list(a.shape), "dtype": "float32"}}).refs["out_0"]
    assert np.array_equal(np.concatenate(list(ref.chunks(512))), a.reshape(-1))


def test_stored_npz_member_is_read_in_place(tmp_path, small_windows):
    a, b = _arr(seed=2), np.arange(12, dtype=np.int64).reshape(3, 4)
    np.savez(tmp_path / "x.npz", a=a, b=b)
    with zipfile.ZipFile(tmp_path / "x.npz") as zf:
        info = zf.getinfo("a.npy")
        assert io._stored_member_data(info, str(tmp_path / "x.npz"), a.nbytes) is not None
    col = open_collection(str(tmp_path / "x.npz"))
    ca = list(col.refs["a"].chunks(333))
    assert np.array_equal(np.concatenate(ca), a.reshape(-1)) and not ca[0].flags.writeable
    assert np.array_equal(col.refs["b"].load(), b)


def test_compressed_npz_member_is_streamed_and_gives_the_same_metrics(tmp_path, small_windows):
    base = _arr(seed=3)
    cand = base + np.float32(0.01) * _arr(seed=4)
    np.savez(tmp_path / "b.npz", t=base)
    np.savez_compressed(tmp_path / "cz.npz", t=cand)
    np.save(tmp_path / "t.npy", cand)
    with zipfile.ZipFile(tmp_path / "cz.npz") as zf:
        assert io._stored_member_data(zf.getinfo("t.npy"), str(tmp_path / "cz.npz"), cand.nbytes) is None
    r1 = compare_collections(open_collection(str(tmp_path / "b.npz")), open_collection(str(tmp_path / "cz.npz"))).rows[0]
    r2 = compare_collections(open_collection(str(tmp_path / "b.npz")), open_collection(str(tmp_path / "t.npy"))).rows[0]
    assert r1["cosine"] < 1.0 and r1["kl"] > 0.0
    for k in ("cosine", "max_abs", "max_rel", "mean_rel", "rel_euclid", "kl", "mae", "rmse"):
        assert r1[k] == r2[k], k


def test_member_header_larger_than_its_data_is_not_mapped(tmp_path):
    a = _arr(n=400)
    np.savez(tmp_path / "x.npz", a=a)
    with zipfile.ZipFile(tmp_path / "x.npz") as zf:
        info = zf.getinfo("a.npy")
        assert io._stored_member_data(info, str(tmp_path / "x.npz"), a.nbytes + 4) is None


def test_npy_truncated_after_open_is_a_clear_error(tmp_path):
    a = _arr(n=4000)
    p = tmp_path / "a.npy"
    np.save(p, a)
    ref = open_collection(str(p)).refs["a"]
    with open(p, "r+b") as fh:
        fh.truncate(1000)
    with pytest.raises(AscendifyError, match="file ended early"):
        list(ref.chunks())


@pytest.fixture()
def count_maps(monkeypatch):
    calls = []
    real = io.mmap.mmap

    def counting(*a, **kw):
        calls.append(a[1])
        return real(*a, **kw)

    monkeypatch.setattr(io.mmap, "mmap", counting)
    return calls


def test_keep_mapped_maps_a_file_once_for_two_reads(tmp_path, small_windows, count_maps):
    a = _arr(seed=4)
    np.save(tmp_path / "a.npy", a)
    ref = open_collection(str(tmp_path / "a.npy")).refs["a"]
    plain = [np.concatenate(list(ref.chunks(256))) for _ in range(2)]
    assert len(count_maps) == 2 * -(-a.nbytes // 4096)  # without: every read maps window after window
    count_maps.clear()
    with io.keep_mapped():
        kept = [list(ref.chunks(256)) for _ in range(2)]
    assert len(count_maps) == 1 and count_maps[0] >= a.nbytes  # with: the whole data once, for both reads
    for chunks in kept:
        assert [c.size for c in chunks] == [256] * (a.size // 256) + [a.size % 256]
        assert np.array_equal(np.concatenate(chunks), plain[0]) and not chunks[0].flags.writeable
    count_maps.clear()
    list(ref.chunks(256))  # outside again: windows, the kept map is gone
    assert len(count_maps) == -(-a.nbytes // 4096)


def test_keep_mapped_leaves_large_files_in_windows(tmp_path, small_windows, count_maps, monkeypatch):
    monkeypatch.setattr(io, "KEEP_MAPPED", 10_000)
    a = _arr(seed=5)  # 40 000 bytes > KEEP_MAPPED
    np.save(tmp_path / "a.npy", a)
    ref = open_collection(str(tmp_path / "a.npy")).refs["a"]
    with io.keep_mapped():
        got = [np.concatenate(list(ref.chunks(256))) for _ in range(2)]
    assert len(count_maps) == 2 * -(-a.nbytes // 4096)
    assert np.array_equal(got[0], a.reshape(-1)) and np.array_equal(got[1], a.reshape(-1))


def test_compare_with_kl_maps_each_file_once_and_gives_the_same_metrics(tmp_path, count_maps):
    from ascendify.compare import metrics as M

    base, cand = _arr(200_000, seed=6), _arr(200_000, seed=7)
    for side, arr in (("base", base), ("cand", cand)):
        (tmp_path / side).mkdir()
        np.save(tmp_path / side / "out.npy", arr)
    rep = compare_collections(open_collection(str(tmp_path / "base")), open_collection(str(tmp_path / "cand")))
    assert len(count_maps) == 2  # one map per file for the range pass and the data pass
    ref = M.compare_arrays(cand, base)  # the same chunks in memory: bit-identical
    for k in M.METRICS:
        assert rep.rows[0][k] == ref[k], k
