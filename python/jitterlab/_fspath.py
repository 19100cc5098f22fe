"""A sweep's output on any fsspec filesystem (``s3://bucket/sweep``, ``gcs://…``, ``memory://…``):
the few `pathlib.Path` operations the sweep's storage uses, so that one code path serves a local
directory (a `Path`, through the os module: fast) and a URL (an `FsPath`, through fsspec).

What differs on an object store, and how the sweep copes: there is no atomic rename, so a run's
file is one object written in place (a run without one is unfinished and done again; a partial
or damaged one fails its trailer, its record or its checksum); there are no processes to ask
about, so no temporary files are left to clean; a combined table is
written under a temporary name and moved (a copy on S3) when complete.
"""
from __future__ import annotations

import fnmatch
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator

from jitterlab import _lazy, _native

if TYPE_CHECKING:
    import pyarrow as pa
else:  # imported where a table is read (a sweep's run stores its tables natively)
    pa = _lazy.module("pyarrow")


#: Packages whose exceptions are a storage backend's: fsspec and the clients its filesystems drive
#: (a botocore ClientError for a missing bucket or a denied key is not an OSError).
STORAGE_PACKAGES = frozenset({"fsspec", "s3fs", "botocore", "aiobotocore", "boto3", "gcsfs", "google", "adlfs", "azure",
                              "aiohttp", "requests", "urllib3"})


def storage_error(e: BaseException, out: object) -> str | None:
    """One line for an exception that the storage behind URL `out` raised without making it an
    OSError (those are reported as they are), or None when `e` is not the storage's: its class
    comes from one of STORAGE_PACKAGES or from the package of `out`'s filesystem."""
    if not isinstance(out, FsPath) or isinstance(e, OSError) or not isinstance(e, Exception):
        return None
    roots = STORAGE_PACKAGES | {type(out.fs).__module__.split(".")[0]}
    if type(e).__module__.split(".")[0] not in roots:
        return None
    return f"{out}: the storage failed: {type(e).__name__}: {e}"


def is_url(out: object) -> bool:
    """A URL for fsspec (``proto://…``); ``file://`` and plain paths are local directories."""
    return isinstance(out, str) and "://" in out and not out.startswith("file://")


def as_path(out: str | Path | FsPath) -> Path | FsPath:
    if isinstance(out, (Path, FsPath)):
        return out
    if is_url(out):
        return FsPath.from_url(out)
    return Path(str(out).removeprefix("file://"))


class FsPath:
    """A path on an fsspec filesystem, with the `Path` methods a sweep's storage calls."""

    __slots__ = ("fs", "path", "proto")

    def __init__(self, fs: Any, path: str, proto: str):
        self.fs, self.path, self.proto = fs, path.rstrip("/") or "/", proto

    @classmethod
    def from_url(cls, url: str) -> FsPath:
        import fsspec

        from jitterlab._io import OutputError

        try:
            fs, path = fsspec.core.url_to_fs(url)
        except (ImportError, ValueError) as e:  # an unknown protocol, or its package missing
            raise OutputError(f"{url}: {e}") from None
        except OSError as e:  # a filesystem that connects as it starts (ftp, sftp, hdfs): nobody there
            raise OutputError(f"{url}: cannot reach the storage: {' '.join((e.strerror or str(e)).split())}") from None
        except Exception as e:
            if type(e).__module__.split(".")[0] not in STORAGE_PACKAGES | {"pyarrow", "paramiko"}:
                raise
            raise OutputError(f"{url}: the storage failed: {type(e).__name__}: {' '.join(str(e).split())}") from None
        return cls(fs, path, url.split("://", 1)[0])

    def __truediv__(self, name: str) -> FsPath:
        return FsPath(self.fs, f"{self.path}/{name}", self.proto)

    def __str__(self) -> str:
        # the protocol as the user wrote it (fsspec would name local:// file://, which a worker
        # would take for a local directory): what a worker is handed, and what messages show
        return f"{self.proto}://{self.path}"

    def __repr__(self) -> str:
        return f"FsPath({str(self)!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, FsPath) and other.fs is self.fs and other.path == self.path

    def __hash__(self) -> int:
        return hash(self.path)

    def __lt__(self, other: FsPath) -> bool:
        return self.path < other.path

    @property
    def name(self) -> str:
        return self.path.rsplit("/", 1)[-1]

    @property
    def parent(self) -> FsPath:
        return FsPath(self.fs, self.path.rsplit("/", 1)[0] or "/", self.proto)

    def with_name(self, name: str) -> FsPath:
        return self.parent / name

    def exists(self) -> bool:
        return bool(self.fs.exists(self.path))

    def is_dir(self) -> bool:
        return bool(self.fs.isdir(self.path))

    def is_file(self) -> bool:
        return bool(self.fs.isfile(self.path))

    def read_bytes(self) -> bytes:
        return bytes(self.fs.cat_file(self.path))

    def write_bytes(self, data: bytes) -> None:
        self.fs.pipe_file(self.path, bytes(data))

    def read_text(self) -> str:
        return self.read_bytes().decode()

    def write_text(self, text: str) -> None:
        self.write_bytes(text.encode())

    def mkdir(self, parents: bool = False, exist_ok: bool = False) -> None:
        self.fs.makedirs(self.path, exist_ok=True)

    def iterdir(self) -> Iterator[FsPath]:
        if not self.fs.isdir(self.path):
            return iter(())
        return iter([FsPath(self.fs, p, self.proto) for p in self.fs.ls(self.path, detail=False) if p.rstrip("/") != self.path])

    def glob(self, pattern: str) -> Iterator[FsPath]:
        """Entries of this directory whose name matches `pattern` (one level, as the sweep uses)."""
        return (p for p in self.iterdir() if fnmatch.fnmatchcase(p.name, pattern))

    def unlink(self, missing_ok: bool = False) -> None:
        try:
            self.fs.rm_file(self.path)
        except FileNotFoundError:
            if not missing_ok:
                raise

    def rmtree(self) -> None:
        if self.fs.exists(self.path):
            self.fs.rm(self.path, recursive=True)


def names(d: Path | FsPath) -> set[str]:
    """The names in directory `d` (empty when it does not exist): one listing, not a stat each."""
    if isinstance(d, FsPath):
        return {p.name for p in d.iterdir()}
    return set(os.listdir(d)) if d.is_dir() else set()


def rmtree(d: Path | FsPath) -> None:
    if isinstance(d, FsPath):
        d.rmtree()
    else:
        import shutil  # not at import: shutil imports bz2, lzma and zlib (~1.3 ms), which a sweep never needs

        shutil.rmtree(d, ignore_errors=True)


def replace(src: Path | FsPath, dst: Path | FsPath) -> None:
    """Moves file `src` to `dst` (atomic locally; a copy and a delete on an object store)."""
    if isinstance(src, FsPath) and isinstance(dst, FsPath):
        src.fs.mv(src.path, dst.path)
    else:
        os.replace(src, dst)  # type: ignore[arg-type]


def open_write(p: Path | FsPath) -> Any:
    """A binary file open for writing (an object store's upload completes at close)."""
    if isinstance(p, FsPath):
        return p.fs.open(p.path, "wb")
    return open(p, "wb")


def read_parquet(p: Path | FsPath, columns: list[str] | None = None) -> pa.Table:
    """Parquet file `p` (only `columns` when given), read through `ParquetFile`: `pq.read_table`
    goes through pyarrow.dataset, whose import imports pandas (0.2 s of CPU in a process that
    needs no pandas, such as `jitterlab sweep` reading its media table for the summary)."""
    import pyarrow.parquet as pq  # not at import: ~25 ms of a process that reads no Parquet (a sweep's workers)

    if isinstance(p, FsPath):
        with p.fs.open(p.path, "rb") as f, pq.ParquetFile(f) as pf:
            return pf.read(columns=columns)
    with pq.ParquetFile(p) as pf:
        return pf.read(columns=columns)


def parquet_schema(p: Path | FsPath) -> pa.Schema:
    """The Arrow schema of a Parquet file, from its footer."""
    import pyarrow.parquet as pq  # not at import (see read_parquet)

    if isinstance(p, FsPath):
        with p.fs.open(p.path, "rb") as f:
            return pq.ParquetFile(f).schema_arrow
    return pq.ParquetFile(p).schema_arrow


def parquet_rows(p: Path | FsPath) -> int:
    """Rows of a Parquet file, from its footer."""
    import pyarrow.parquet as pq  # not at import (see read_parquet)

    if isinstance(p, FsPath):
        with p.fs.open(p.path, "rb") as f:
            return int(pq.ParquetFile(f).metadata.num_rows)
    return int(pq.ParquetFile(p).metadata.num_rows)


def write_bytes(p: Path | FsPath, data: bytes) -> None:
    """Writes `data` under a temporary name beside `p` and moves it to `p` when complete."""
    from jitterlab import _io

    if isinstance(p, FsPath):
        tmp = p.with_name(f".{p.name}.tmp{os.getpid()}")
        try:
            with open_write(tmp) as f:
                f.write(data)
            replace(tmp, p)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        return
    _io.write_atomic(p, lambda tmp: tmp.write_bytes(data))


def sha256(p: Path | FsPath) -> str:
    """SHA-256 of a file's bytes (a local one streamed)."""
    if isinstance(p, FsPath):
        return _native.sha256_hex(p.read_bytes())
    from jitterlab import _io

    return _io.sha256_file(p)


def write_text(p: Path | FsPath, text: str) -> None:
    """A small file, complete under its final name (an object store's put is)."""
    if isinstance(p, FsPath):
        p.write_text(text)
    else:
        from jitterlab import _io

        _io.write_text_atomic(p, text)


def prepare(out: FsPath, kind: str = "sweep") -> FsPath:
    """`_io.prepare_out` for a URL: refuses a place holding something jitterlab did not write or
    another kind of result, creates it, and checks it can be written."""
    from jitterlab._io import OutputError

    try:
        if out.exists():
            if not out.is_dir():
                raise OutputError(f"--out {out}: is a file, expected a directory")
            entries = [p for p in out.iterdir() if not p.name.startswith(".")]
            if entries and not (out / "sweep.json").exists():
                raise OutputError(f"--out {out}: holds files jitterlab did not write (no sweep.json); choose another place")
        out.mkdir(parents=True, exist_ok=True)
        probe = out / ".jitterlab-probe"
        probe.write_bytes(b"")
        probe.unlink(missing_ok=True)
    except OSError as e:
        raise OutputError(f"--out {out}: cannot write there: {e.strerror or e}") from None
    except Exception as e:
        msg = storage_error(e, out)
        if msg is None:
            raise
        raise OutputError(f"--out {msg}") from None
    return out
