"""A run's parts and the combined tables' merged row groups, encoded by the native module
(`_native.encode_pack`, `encode_table`, `merge_parts`): pyarrow reads back the tables it handed
over, types and metadata included, as it read its own images before; the same sweep writes the
same bytes."""
import hashlib
import json

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from jitterlab import _native, sweep
from jitterlab.sweep import store as sw_store
from test_sweep import SWEEP, write
from _runs import log_entries


def _pyarrow_image(t: pa.Table) -> bytes:
    """How the parts were written before (pyarrow; its options for the combined tables)."""
    sink = pa.BufferOutputStream()
    pq.write_table(t, sink, use_dictionary=[c.name for c in t.schema if pa.types.is_string(c.type)],
                   column_encoding={c.name: "DELTA_BINARY_PACKED" for c in t.schema if pa.types.is_integer(c.type)})
    return sink.getvalue().to_pybytes()


def _stats(rid: int) -> pa.Table:
    df = pd.DataFrame({"run_id": [rid, rid], "q": [0.5, 0.99], "flow": pd.Categorical(["audio", "audio"]),
                       "at": pd.to_datetime([rid, rid + 1], unit="s", utc=True)})
    return pa.Table.from_pandas(df, preserve_index=False)


def _typed() -> dict[str, pa.Table]:
    """Tables of the types a sweep's tables and `Sweep.reduce` aggregates hold."""
    df = pd.DataFrame({"run_id": [4, 4, 4], "mean_ms": [1.5, float("nan"), 3.25], "flow": ["audio", "web", "audio"],
                       "at": pd.to_datetime(["2026-01-01 00:00:00", "2026-01-01 00:00:01", None]).tz_localize("UTC")})
    return {
        "sim": pa.table({"run_id": pa.array([0, 0, 0], pa.int64()), "recv_ns": pa.array([10, None, 30], pa.int64()),
                         "ce": pa.array([True, False, True]), "lost_where": pa.array([None, "queue", None])}),
        "dictionary": pa.table({"role": pa.array(["a", "b", "a", None]).dictionary_encode(), "n": pa.array([1, 2, 3, 4], pa.uint32())}),
        "timestamps": pa.table({"t": pa.array([0, 1_000_000_007, None], pa.timestamp("ns")),
                                "t_tz": pa.array([5, 6, 7], pa.timestamp("us", tz="Europe/Paris"))}),
        "nulls": pa.table({"run_id": pa.array([1, 1], pa.int64()), "v": pa.nulls(2), "s": pa.array(["x", "y"], pa.large_string())}),
        "pandas": pa.Table.from_pandas(df, preserve_index=False),
        "pandas-categorical": _stats(3),
        "chunked": pa.concat_tables([pa.table({"x": pa.array([1, 2], pa.int64())}), pa.table({"x": pa.array([3], pa.int64())})]),
    }


@pytest.mark.parametrize("name", list(_typed()))
def test_native_parts_read_back_as_pyarrow_parts_did(name):
    """Every type reads back from a native Parquet image as it did from pyarrow's own, and from a
    native Arrow IPC image (a small part) as from pyarrow's IPC: equal tables, schema metadata
    included (dictionaries, time zones, null columns, large strings, pandas' metadata)."""
    t = _typed()[name]
    mine = pq.read_table(pa.BufferReader(_native.encode_table(t, 0)))
    theirs = pq.read_table(pa.BufferReader(_pyarrow_image(t)))
    assert mine.schema.equals(theirs.schema, check_metadata=True), (mine.schema, theirs.schema)
    assert mine.equals(theirs, check_metadata=True)
    assert mine.num_rows == t.num_rows
    ipc = _native.encode_table(t, t.num_rows + 1)
    assert ipc[:6] == b"ARROW1" and sw_store._native_part(ipc)
    assert pa.ipc.open_file(pa.py_buffer(ipc)).read_all().equals(t.combine_chunks(), check_metadata=True)


def test_pack_holds_each_table_aligned_with_its_sha256():
    """`encode_pack`: each table's image at a multiple of 64 bytes, zero bytes between, in order,
    Parquet from the threshold's rows and Arrow IPC below; the parts' rows; the SHA-256 of the
    whole pack (hashlib's)."""
    tables = _typed()
    blob, parts, sha = _native.encode_pack(list(tables.items()), 64, 3)
    assert sha == hashlib.sha256(blob).hexdigest()
    assert [p[0] for p in parts] == list(tables)
    end = 0
    for (name, off, size, rows), t in zip(parts, tables.values()):
        assert off % 64 == 0 and off == end + (-end % 64) and set(blob[end:off]) <= {0}
        assert rows == t.num_rows and blob[off:off + size] == _native.encode_table(t, 3)
        assert sw_store._decode_part(pa.py_buffer(blob[off:off + size])).num_rows == rows
        end = off + size
    assert len(blob) == end + (-end % 64)
    assert {blob[p[1]:p[1] + 4] for p in parts} == {b"PAR1", b"ARRO"}  # both kinds here (2 and 3+ rows)


def test_merge_decodes_parts_and_encodes_one_row_group():
    """`merge_parts`: the parts' rows in order, whether Parquet or Arrow IPC images, one Parquet
    row group, the bytes of one part of those rows encoded at once; a part of another schema, or
    neither format, is refused."""
    parts = [pa.table({"run_id": pa.array([i] * (i + 1), pa.int64()), "s": pa.array(["x"] * i + [None], pa.string())}) for i in range(5)]
    imgs = [_native.encode_table(t, 3) for t in parts]  # 1-2 rows: IPC; 3-5: Parquet
    assert [i[:4] for i in imgs] == [b"ARRO", b"ARRO", b"PAR1", b"PAR1", b"PAR1"]
    merged = _native.merge_parts(imgs)
    f = pq.ParquetFile(pa.BufferReader(merged))
    assert f.metadata.num_row_groups == 1 and f.metadata.num_rows == 15
    assert pq.read_table(pa.BufferReader(merged)).equals(pa.concat_tables(parts))
    assert merged == _native.encode_table(pa.concat_tables(parts).combine_chunks(), 0)
    other = pa.table({"run_id": pa.array([9], pa.int64()), "s": pa.array([1], pa.int64())})
    with pytest.raises(ValueError, match="schema differs"):
        _native.merge_parts([imgs[0], _native.encode_table(other, 3)])
    with pytest.raises(ValueError, match="Parquet"):
        _native.merge_parts([imgs[0], b"PAR1 not a Parquet file"])


def _typed_reduce(res) -> dict[str, pa.Table]:
    return {"stats": _stats(int(res.arrow["runs"].column("run_id")[0].as_py()))}


def test_same_sweep_writes_the_same_bytes_and_reduce_types_survive(tmp_path):
    """The same sweep and seed into two OUTs: every file byte for byte the same (packs, done
    records, combined tables). A `Sweep.reduce` table of pandas types (categorical, UTC times,
    floats) reads back from the combined file with those types, as the runs' tables concatenated."""
    f = write(tmp_path, SWEEP)
    outs = []
    for k in "ab":
        sw = sweep.load(f)
        sw.tables = ("media_packets", "runs", "stats")
        sw.reduce = _typed_reduce
        sweep.run(sw, tmp_path / k, jobs=1, progress=False)
        # sweep.json: provenance (dates, host); a run's record: its wall time (and combined.json hashes those)
        # a run log's name: when it was opened, the host and process
        files = {p.relative_to(tmp_path / k).as_posix(): p.read_bytes() for p in sorted((tmp_path / k).rglob("*"))
                 if p.is_file() and p.name not in ("sweep.json", "combined.json") and not p.name.endswith(sweep.LOG_SUFFIX)}
        for i, e in log_entries(tmp_path / k).items():
            rec = sweep.read_run_record(e)
            files[f"runs/{i:06d}"] = (e.read_bytes()[:rec["pack"]["bytes"]], {**rec, "wall_s": None}, e.offset, e.length - len(json.dumps(rec)))
        outs.append(files)
    assert outs[0] == outs[1]
    assert sum(n.startswith("runs/") for n in outs[0]) == 12
    stats = pq.read_table(tmp_path / "a" / "stats.parquet")
    assert stats.schema.field("flow").type == pa.dictionary(pa.int8(), pa.string())
    at = stats.schema.field("at").type  # pandas' resolution (ns, or us from pandas 3)
    assert pa.types.is_timestamp(at) and at.tz == "UTC"
    # as pyarrow's own Parquet reads them back (a dictionary of large_string reads as one of string)
    want = pa.concat_tables([pq.read_table(pa.BufferReader(_pyarrow_image(_stats(i)))) for i in range(12)])
    assert stats.equals(want, check_metadata=True) and stats.column("run_id").to_pylist() == [i for i in range(12) for _ in range(2)]
    e = log_entries(tmp_path / "a")[3]
    rec = sweep.read_run_record(e)
    blob = e.read_bytes()[:rec["pack"]["bytes"]]
    assert rec["pack"] == {"bytes": len(blob), "sha256": hashlib.sha256(blob).hexdigest()}
    assert all(sw_store._native_part(blob[p[0]:p[0] + p[1]]) for p in rec["parts"].values())


def test_part_merger_decodes_as_parts_come_and_refuses_another_schema():
    """`PartMerger` (the combining thread's): 600 one-row parts (past its join of every 256
    batches) give one Parquet row group of their rows in order, the bytes of those rows encoded
    at once; a part of another schema is refused and nothing of it kept; after `finish` it is
    empty again."""
    parts = [pa.table({"run_id": pa.array([i], pa.int64()), "s": pa.array([str(i % 7)])}) for i in range(600)]
    m = _native.PartMerger()
    for t in parts[:300]:
        m.add(_native.encode_table(t, 4096))
    with pytest.raises(ValueError, match="schema differs"):
        m.add(_native.encode_table(pa.table({"run_id": pa.array([0.5])}), 4096))
    for t in parts[300:]:
        m.add(_native.encode_table(t, 4096))
    out = m.finish()
    f = pq.ParquetFile(pa.BufferReader(out))
    assert f.metadata.num_row_groups == 1 and f.metadata.num_rows == 600
    assert out == _native.encode_table(pa.concat_tables(parts).combine_chunks(), 0)
    with pytest.raises(ValueError, match="nothing to merge"):
        m.finish()
    # tables in memory handed over joined (`add_table`), between parts: the same bytes
    m.add(_native.encode_table(parts[0], 4096))
    m.add_table(pa.concat_tables(parts[1:400]))
    with pytest.raises(ValueError, match="schema differs"):
        m.add_table(pa.table({"run_id": pa.array(["x"])}))
    for t in parts[400:]:
        m.add(_native.encode_table(t, 4096))
    assert m.finish() == out
