"""A folder of logs: documentation and code beside the logs are not read as logs; named files are."""

from __future__ import annotations

from ascendify.diagnose.scanner import expand_inputs


def test_folder_walk_skips_docs_code_and_config(tmp_path):
    (tmp_path / "rank_0.log").write_text("x\n")
    (tmp_path / "metrics.jsonl").write_text("{}\n")
    (tmp_path / "plog-123_1.log").write_text("x\n")
    for name in ("README.md", "README", "LICENSE", "train.py", "config.yaml", "notes.rst", "run.sh"):
        (tmp_path / name).write_text("[ERROR] RUNTIME ... EZ9999\n")
    files, notes = expand_inputs((str(tmp_path),))
    assert sorted(p.rsplit("/", 1)[1] for p in files) == ["metrics.jsonl", "plog-123_1.log", "rank_0.log"]
    named, _ = expand_inputs((str(tmp_path / "README.md"),))
    assert named == [str(tmp_path / "README.md")]
