"""The one result type of every source: `Tables`, Arrow tables with pandas views of the same data.

`jitterlab.simulate` (`sim.Result`), `jitterlab.analyze` / `analyze_pairs`, `jitterlab.testbed.run`
and `jitterlab.sweep` (`sweep.SweepResult`) all return a `Tables`; `load(DIR)` reads any output
directory back into one. ``res["media_packets"]`` or ``res.media_packets`` is a pandas DataFrame
(nullable integers as ``Int64``, text as ``string``); ``res.arrow["media_packets"]`` the Arrow
table. Every source writes the same Arrow types for the columns they share (`to_arrow`: text is
``string``, never ``large_string``; times are ``int64`` ns), so the tables of simulate, analyze and
testbed concatenate with ``pyarrow.concat_tables`` without casting. Columns: docs/tables.md.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Iterator, Mapping, MutableMapping

from jitterlab import _lazy

if TYPE_CHECKING:  # pandas is imported where a DataFrame is made (a sweep's workers never need it)
    import pandas as pd
    import pyarrow as pa

    from jitterlab import _fspath
else:  # nor pyarrow: a sweep's run keeps its tables native until one is read (`LazyTables.native`)
    pa = _lazy.module("pyarrow")


def to_arrow(df: pd.DataFrame) -> pa.Table:
    """A pandas table as Arrow with jitterlab's canonical types: ``large_string`` becomes
    ``string``. The pandas metadata stays (``pandas.read_parquet`` then restores ``Int64``
    columns); ``pyarrow.concat_tables`` ignores it.

    >>> import pandas as pd
    >>> to_arrow(pd.DataFrame({"s": pd.array(["a", None], dtype="string")})).schema.field("s").type
    DataType(string)
    """
    if not len(df.columns):
        return pa.table({"run_id": pa.array([], type=pa.int64())})
    t = pa.Table.from_pandas(df, preserve_index=False)
    return canonical(t)


def _arrow_table(t: Any) -> pa.Table:
    """An object of the Arrow stream protocol (`__arrow_c_stream__`: a `_native.NativeTable`) as a
    pyarrow table, its buffers shared. Not `pa.table(t)`: that first checks for a pandas frame,
    importing pandas (half a second)."""
    return pa.RecordBatchReader.from_stream(t).read_all()


#: Columns that may hold nulls (int64 with nulls becomes pandas' nullable Int64).
NULLABLE = {"recv_ns", "syn_ns", "first_data_ns", "end_ns", "tcp_start_ns", "tcp_end_ns", "srtt_ns", "ssthresh"}


def to_pandas(t: pa.Table) -> pd.DataFrame:
    """Arrow table to pandas, keeping nullable integer columns as Int64 (not float64)."""
    import numpy as np
    import pandas as pd

    df = t.to_pandas()
    for c in t.column_names:
        if c in NULLABLE and pa.types.is_integer(t.schema.field(c).type):
            col = t.column(c)
            df[c] = pd.arrays.IntegerArray(col.fill_null(0).to_numpy().astype(np.int64), col.is_null().to_numpy())
        elif pa.types.is_string(t.schema.field(c).type) or pa.types.is_large_string(t.schema.field(c).type):
            df[c] = df[c].astype("string")
    return df


def canonical(t: pa.Table) -> pa.Table:
    """`t` with ``large_string`` columns as ``string`` (metadata kept)."""
    if not any(pa.types.is_large_string(f.type) for f in t.schema):
        return t
    fields = [pa.field(f.name, pa.string() if pa.types.is_large_string(f.type) else f.type, f.nullable, f.metadata) for f in t.schema]
    return t.cast(pa.schema(fields, metadata=t.schema.metadata))


class LazyTables(MutableMapping[str, "pa.Table"]):
    """Arrow tables by name, some read from their Parquet file (a local path or an
    `_fspath.FsPath`) only when first asked for: a sweep's combined tables past what the client
    keeps in memory (`sweep.combine._Combiner.HOLD_BYTES`); or held by the native module (a
    run's tables, `_native.NativeTable`) and handed to pyarrow when first asked for (its buffers
    shared): a sweep's worker stores them and computes their summary share without pyarrow.
    `Tables` keeps one as it is."""

    def __init__(self) -> None:
        self._t: dict[str, pa.Table] = {}
        self._files: dict[str, Any] = {}
        self._native: dict[str, Any] = {}
        self._rows: dict[str, int] = {}

    def later(self, name: str, path: Any, rows: int | None = None) -> None:
        """Table `name` read from its file `path` when first asked for; `rows`, when known (the
        sweep that wrote it counted them), answers `num_rows` without reading the footer."""
        self._files[name] = path
        if rows is not None:
            self._rows[name] = rows

    def __getstate__(self) -> dict[str, Any]:
        # pickled (a result sent to another process): the tables held native go as Arrow tables
        for name in list(self._native):
            self[name]
        return self.__dict__

    def native(self, name: str, t: Any) -> None:
        """Table `name` held by the native module (`_native.NativeTable`) until it is read."""
        self._native[name] = t

    def held(self, name: str) -> Any:
        """Table `name` as held: its `_native.NativeTable` when not yet read (for the native
        module's encoders), else the Arrow table."""
        got = self._native.get(name)
        return got if got is not None else self[name]

    def held_many(self, names: Iterable[str]) -> dict[str, Any]:
        """`held` of each of `names` that is here, by name in their order (a sweep's run: one
        call, not two a table)."""
        nat = self._native
        return {n: nat[n] if n in nat else self[n] for n in names if n in nat or n in self._t or n in self._files}

    def native_table(self, name: str) -> Any:
        """Table `name` as a `_native.NativeTable` without pyarrow where it can be: held native,
        or a local Parquet file not yet read, read whole by the native module (a sweep's small
        combined tables, for its closing summary); None otherwise (held as Arrow, on fsspec, or
        unreadable natively). The file stays where it is: pyarrow reads it if asked."""
        got = self._native.get(name)
        if got is not None:
            return got
        path = self._files.get(name)
        if isinstance(path, Path):
            from jitterlab import _native

            try:
                return _native.NativeTable.read_parquet(path)
            except ValueError:
                return None
        return None

    def num_rows(self, name: str) -> int:
        """Rows of table `name`, from its file's footer when it is not loaded (no data read)."""
        if name in self._t:
            return self._t[name].num_rows
        if name in self._native:
            return int(self._native[name].num_rows)
        if name in self._rows and name in self._files:
            return self._rows[name]
        from jitterlab import _fspath

        return _fspath.parquet_rows(self._files[name])

    def __getitem__(self, name: str) -> pa.Table:
        if name not in self._t:
            if name in self._native:
                self._t[name] = _arrow_table(self._native.pop(name))
            elif name not in self._files:
                raise KeyError(name)
            else:
                from jitterlab import _fspath

                self._t[name] = _fspath.read_parquet(self._files.pop(name))
        return self._t[name]

    def column_names(self, name: str) -> list[str]:
        """Columns of table `name`, from its file's footer when it is not loaded (no data read)."""
        if name in self._t:
            return self._t[name].column_names
        if name in self._native:
            return list(self._native[name].column_names)
        from jitterlab import _fspath

        return _fspath.parquet_schema(self._files[name]).names

    def read_columns(self, name: str, columns: list[str]) -> pa.Table:
        """Only `columns` of table `name`: from the loaded table, or read from its file without
        keeping it (a reader that needs a few columns once does not decode the others)."""
        if name in self._t or name in self._native:
            return self[name].select(columns)
        if name not in self._files:
            raise KeyError(name)
        from jitterlab import _fspath

        return _fspath.read_parquet(self._files[name], columns=columns)

    def __setitem__(self, name: str, t: pa.Table) -> None:
        self._files.pop(name, None)
        self._native.pop(name, None)
        self._t[name] = t

    def __delitem__(self, name: str) -> None:
        if self._files.pop(name, None) is None and self._native.pop(name, None) is None:
            del self._t[name]

    def __contains__(self, name: object) -> bool:
        return name in self._t or name in self._files or name in self._native

    def __iter__(self) -> Iterator[str]:
        return iter([*self._t, *self._native, *self._files])

    def __len__(self) -> int:
        return len(self._t) + len(self._files) + len(self._native)


class Tables(Mapping[str, "pd.DataFrame"]):
    """Tables of one result, held as Arrow; each is also a pandas DataFrame.

    Parameters
    ----------
    arrow : dict of str to pyarrow.Table
        The tables by name (media_packets, tcp_flows, runs, …; docs/tables.md).
    source : str
        ``sim``, ``testbed``, ``capture`` or ``sweep``.

    Notes
    -----
    ``res[name]`` returns the same DataFrame object each time (cached). To change a table, assign
    it (``res[name] = df``), which replaces both views; editing the DataFrame in place leaves
    ``res.arrow`` as it was.
    """

    def __init__(self, arrow: Mapping[str, pa.Table], source: str = "sim"):
        # a LazyTables is kept as it is (it reads a table when first used); anything else copied
        self.arrow: MutableMapping[str, pa.Table] = arrow if isinstance(arrow, LazyTables) else dict(arrow)
        self.source = source
        self._pd: dict[str, pd.DataFrame] = {}

    @classmethod
    def from_pandas(cls, tables: Mapping[str, pd.DataFrame], source: str) -> "Tables":
        """A `Tables` from pandas tables (converted with `to_arrow`; the frames are kept as views)."""
        res = cls({n: to_arrow(df) for n, df in tables.items()}, source)
        res._pd.update(tables)
        return res

    def __getitem__(self, name: str) -> pd.DataFrame:
        if name not in self._pd:
            self._pd[name] = to_pandas(self.arrow[name])
        return self._pd[name]

    def __setitem__(self, name: str, df: pd.DataFrame) -> None:
        self.arrow[name] = to_arrow(df)
        self._pd[name] = df

    def __contains__(self, name: object) -> bool:
        return name in self.arrow

    def __iter__(self) -> Iterator[str]:
        return iter(self.arrow)

    def __len__(self) -> int:
        return len(self.arrow)

    def __getattr__(self, name: str) -> pd.DataFrame:
        # called only when normal lookup fails: table names as attributes (res.media_packets)
        arrow = self.__dict__.get("arrow")
        if arrow is not None and name in arrow:
            return self[name]
        raise AttributeError(name)

    @property
    def tables(self) -> dict[str, pd.DataFrame]:
        """All tables as pandas DataFrames."""
        return {n: self[n] for n in self.arrow}

    def _repr_html_(self) -> str:
        """Jupyter's view: one row per table with its row count and columns (nothing converted
        to pandas; a sweep's lazily read tables show their row counts only)."""
        import html

        arrow = self.arrow
        lazy = isinstance(arrow, LazyTables)
        rows = []
        for n in arrow:
            k = arrow.num_rows(n) if isinstance(arrow, LazyTables) else arrow[n].num_rows
            cols = "…" if lazy else ", ".join(arrow[n].schema.names)
            rows.append(f"<tr><td><code>{html.escape(n)}</code></td><td style='text-align:right'>{k:,}</td>"
                        f"<td>{html.escape(cols)}</td></tr>")
        return (f"<b>{html.escape(type(self).__name__)}</b> (source <code>{html.escape(self.source)}</code>; "
                "<code>res[name]</code> is a pandas DataFrame, <code>res.arrow[name]</code> an Arrow table)"
                "<table><thead><tr><th>table</th><th>rows</th><th>columns</th></tr></thead><tbody>"
                + "".join(rows) + "</tbody></table>")

    def __repr__(self) -> str:
        arrow = self.arrow
        rows = arrow.num_rows if isinstance(arrow, LazyTables) else (lambda n: arrow[n].num_rows)  # lazy: from the footer
        return f"{type(self).__name__}(source={self.source!r}, " + ", ".join(f"{n}={rows(n)} rows" for n in self.arrow) + ")"


def load(path: str | Path) -> Tables:
    """Reads an output directory (simulate, sweep, analyze or testbed) back.

    Parameters
    ----------
    path : str or Path
        A directory holding manifest.json or sweep.json and the tables as Parquet, or the fsspec
        URL a sweep was written to (``s3://bucket/sweeps/web``).

    Returns
    -------
    Tables
        Its tables; ``source`` from the manifest (``sweep`` for a sweep).
    """
    from jitterlab import _fspath

    p = _fspath.as_path(path)  # a local directory or an fsspec URL (a sweep written to s3://…)
    if (p / "sweep.json").is_file():
        source = "sweep"
    elif (p / "manifest.json").is_file():
        source = str(json.loads((p / "manifest.json").read_text()).get("source", "sim"))
    else:
        raise FileNotFoundError(f"{p}: not a jitterlab output (no manifest.json or sweep.json)")
    files: list[Path | _fspath.FsPath] = list(p.glob("*.parquet"))
    files.sort(key=lambda f: f.name)
    return Tables({f.name.removesuffix(".parquet"): canonical(_fspath.read_parquet(f)) for f in files}, source)
