"""Fetching the public datasets cdsbias uses, pinned by commit and sha256.

The mechanism only: each dataset's spec (:class:`DatasetSpec`: repository, commit, files with
their sha256) lives with the code that reads it — a benchmark's in its module or its
``*_data`` module, the GAP training corpus's in :mod:`cdsbias.data.gap` — and
registers itself with :func:`register_dataset` (as lm-evaluation-harness keeps a task's
``dataset_path`` in the task). :data:`DATASETS` imports those owners on first read.

``fetch`` downloads the files (or copies them from a local folder laid out like the
project's ``shared/data``, for offline installs and CI), verifies them and caches them;
``resolve`` finds one cached file and never downloads by itself.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import tempfile
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator, MutableMapping
from dataclasses import dataclass
from pathlib import Path

from cdsbias.errors import CdsbiasError, unknown_name_error

DOWNLOAD_TIMEOUT_SECONDS = 60
_CHUNK_BYTES = 1 << 20


@dataclass(frozen=True)
class DataFile:
    """One file of a dataset.

    Attributes:
        path: Path inside the dataset folder (the same layout as ``shared/data``).
        upstream_path: Path inside the upstream repository at the pinned commit.
        sha256: Full sha256 hex digest of the file's bytes.
    """

    path: str
    upstream_path: str
    sha256: str


@dataclass(frozen=True)
class DatasetSpec:
    """A dataset pinned to one commit of its public repository.

    Attributes:
        name: Registry name used on the command line, e.g. ``"gap"``.
        folder: Folder name inside a data directory, e.g. ``"gap-coreference"``.
        licence: Licence of the data, as a short readable string.
        repository: GitHub ``owner/name`` the files come from.
        commit: Upstream commit the URLs and checksums refer to.
        files: The data files (no READMEs or licences).
    """

    name: str
    folder: str
    licence: str
    repository: str
    commit: str
    files: tuple[DataFile, ...]

    def url(self, data_file: DataFile) -> str:
        """Returns the canonical download URL of ``data_file`` at the pinned commit."""
        quoted = urllib.parse.quote(data_file.upstream_path)
        return f"https://raw.githubusercontent.com/{self.repository}/{self.commit}/{quoted}"

    def file(self, filename: str) -> DataFile:
        """Looks up one file of this dataset by its path inside the dataset folder."""
        for data_file in self.files:
            if data_file.path == filename:
                return data_file
        raise unknown_name_error(f"file of dataset {self.name}", filename, self.file_names())

    def file_names(self) -> list[str]:
        """Returns the paths of this dataset's files."""
        return [data_file.path for data_file in self.files]


#: Modules whose import declares the dataset specs they own (:func:`register_dataset`): a
#: benchmark's data spec lives with the benchmark, the training corpus's with the corpus
#: code. A package is asked to ``load_all()`` its modules.
SPEC_OWNERS = ("cdsbias.benchmarks", "cdsbias.data.gap")


def register_dataset(spec: DatasetSpec) -> DatasetSpec:
    """Adds ``spec`` to :data:`DATASETS` (the owner module calls this at import).

    Raises:
        ValueError: Another spec is registered under the same name.
    """
    if DATASETS.specs.get(spec.name, spec) != spec:
        raise ValueError(f"Dataset name '{spec.name}' is registered twice.")
    DATASETS.specs[spec.name] = spec
    return spec


class DatasetRegistry(MutableMapping[str, DatasetSpec]):
    """``{name: spec}`` of every dataset, complete on first read: reading imports the
    owners (:data:`SPEC_OWNERS`), whose import registers their specs."""

    def __init__(self, specs: dict[str, DatasetSpec]) -> None:
        self.specs = specs
        self._loaded = False

    def _load(self) -> None:
        if not self._loaded:
            self._loaded = True  # before importing: an owner may read the registry
            try:
                load_specs()
            except BaseException:
                self._loaded = False
                raise

    def __getitem__(self, name: str) -> DatasetSpec:
        if name not in self.specs:
            self._load()
        return self.specs[name]

    def __iter__(self) -> Iterator[str]:
        self._load()
        return iter(self.specs)

    def __len__(self) -> int:
        self._load()
        return len(self.specs)

    def __setitem__(self, name: str, spec: DatasetSpec) -> None:
        self.specs[name] = spec

    def __delitem__(self, name: str) -> None:
        del self.specs[name]


#: Every dataset by name.
DATASETS = DatasetRegistry({})


def load_specs() -> None:
    """Imports every owner of a dataset spec, so that :data:`DATASETS` is complete."""
    import importlib

    for owner in SPEC_OWNERS:
        module = importlib.import_module(owner)
        if hasattr(module, "load_all"):
            module.load_all()


def default_data_dir() -> Path:
    """Returns the cache folder: ``$CDSBIAS_DATA_DIR`` or ``~/.cache/cdsbias/data``."""
    configured = os.environ.get("CDSBIAS_DATA_DIR")
    if configured:
        return Path(configured).expanduser()
    return Path.home() / ".cache" / "cdsbias" / "data"


def get_spec(name: str) -> DatasetSpec:
    """Returns the registry entry for ``name`` or raises a did-you-mean error."""
    try:
        return DATASETS[name]
    except KeyError:
        raise unknown_name_error("dataset", name, DATASETS) from None


def sha256_of(path: Path) -> str:
    """Returns the sha256 hex digest of a file, read in chunks."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(_CHUNK_BYTES), b""):
            digest.update(chunk)
    return digest.hexdigest()


def is_cached(name: str, data_dir: Path | None = None) -> bool:
    """Tells whether every file of a dataset is present in ``data_dir`` (default: the cache).

    Only presence is checked; ``fetch`` verifies checksums when it writes the files.
    """
    spec = get_spec(name)
    folder = (data_dir or default_data_dir()) / spec.folder
    return all((folder / data_file.path).is_file() for data_file in spec.files)


def _source_folder(spec: DatasetSpec, from_dir: Path) -> Path:
    """Accepts ``from_dir`` laid out like shared/data or pointing at the dataset folder."""
    nested = from_dir / spec.folder
    if nested.is_dir():
        return nested
    if any((from_dir / data_file.path).is_file() for data_file in spec.files):
        return from_dir
    raise CdsbiasError(
        f"No '{spec.folder}' folder for dataset {spec.name} in {from_dir} "
        f"(expected {nested}/{spec.files[0].path})"
    )


def _download(url: str, destination: Path) -> None:
    try:
        with (
            urllib.request.urlopen(url, timeout=DOWNLOAD_TIMEOUT_SECONDS) as response,
            open(destination, "wb") as handle,
        ):
            shutil.copyfileobj(response, handle, _CHUNK_BYTES)
    except (urllib.error.URLError, OSError, TimeoutError) as exc:
        reason = getattr(exc, "reason", None) or exc
        raise CdsbiasError(
            f"Could not download {url} ({reason}); without internet access, copy the files "
            "from a local folder with `cdsbias data fetch NAME --data-dir DIR`"
        ) from None


def _install_file(
    spec: DatasetSpec, data_file: DataFile, source: Path | None, target: Path
) -> None:
    """Copies or downloads one file to a temporary name, verifies it, then renames it."""
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        if source is None:
            _download(spec.url(data_file), tmp)
            origin = spec.url(data_file)
        else:
            if not source.is_file():
                raise CdsbiasError(f"Missing file {source} (dataset {spec.name})")
            shutil.copyfile(source, tmp)
            origin = str(source)
        actual = sha256_of(tmp)
        if actual != data_file.sha256:
            raise CdsbiasError(
                f"Checksum mismatch for {origin}: expected sha256 {data_file.sha256}, "
                f"got {actual}; the file was not kept"
            )
        os.replace(tmp, target)
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()


def fetch(name: str, *, to_dir: Path | None = None, from_dir: Path | None = None) -> Path:
    """Downloads (or copies) a dataset, verifies each file's sha256 and caches it.

    Files already in place with the right checksum are not fetched again. Each file is
    written to a temporary name and renamed only after its checksum matched, so a failure
    never leaves a partial or unverified file.

    Args:
        name: Registry name, e.g. ``"gap"``.
        to_dir: Data directory to write into; default ``default_data_dir()``.
        from_dir: Local folder laid out like ``shared/data`` (``from_dir/<folder>/<file>``) or
            the dataset folder itself; when given, nothing is downloaded.

    Returns:
        The dataset folder, ``to_dir/<folder>``.

    Raises:
        CdsbiasError: Unknown name, missing source file, network failure, checksum mismatch.
    """
    spec = get_spec(name)
    target_folder = Path(to_dir or default_data_dir()) / spec.folder
    source_folder = _source_folder(spec, Path(from_dir)) if from_dir is not None else None
    for data_file in spec.files:
        target = target_folder / data_file.path
        if target.is_file() and sha256_of(target) == data_file.sha256:
            continue
        source = source_folder / data_file.path if source_folder is not None else None
        if source is not None and source.resolve() == target.resolve():
            raise CdsbiasError(f"{target} has the wrong checksum and is its own --data-dir source")
        _install_file(spec, data_file, source, target)
    return target_folder


def resolve(name: str, filename: str, data_dir: Path | None = None) -> Path:
    """Returns the path of one file of a dataset, without downloading anything.

    Args:
        name: Registry name, e.g. ``"gap"``.
        filename: Path inside the dataset folder, e.g. ``"gap-test.tsv"``.
        data_dir: Folder laid out like ``shared/data``; default: the cache.

    Raises:
        CdsbiasError: Unknown dataset or file, or the file is not there yet.
    """
    spec = get_spec(name)
    data_file = spec.file(filename)
    path = Path(data_dir or default_data_dir()) / spec.folder / data_file.path
    if not path.is_file():
        raise CdsbiasError(
            f"{path} not found; run `cdsbias data fetch {name}` (or `cdsbias data fetch "
            f"{name} --data-dir DIR` to copy it from a local folder)"
        )
    return path
