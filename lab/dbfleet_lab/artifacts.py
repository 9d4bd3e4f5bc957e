"""Server distributions from Maven Central: download once, verify, extract once.

Layout of the cache (DBFLEET_LAB_CACHE, default ~/.cache/dbfleet-lab, shared by every clone):

    downloads/<artifact file>     the file as Maven delivered it, sha256-verified
    dist/<name>/                  the parts of it the lab needs (written atomically)
    templates/<name>/data/        a pristine datadir per server version (see servers.py)

Maven finds Maven Central itself: no address is written here. A download that fails or does not
match its sha256 is removed and reported; nothing is started then.
"""
import hashlib
import os
import shutil
import subprocess
import tarfile
import tempfile
import zipfile
from dataclasses import dataclass

from . import LabError, built_once, say


@dataclass(frozen=True)
class Artifact:
    """A Maven artifact, ``group:artifact:version:packaging[:classifier]``, and its sha256."""

    coordinate: str
    sha256: str

    @property
    def filename(self):
        parts = self.coordinate.split(":")
        _group, name, version, packaging = parts[:4]
        classifier = "-" + parts[4] if len(parts) > 4 else ""
        return "%s-%s%s.%s" % (name, version, classifier, packaging)


def sha256_of(path):
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def maven_fetch(artifact, dest_dir):
    """Copy the artifact into dest_dir with Maven (which downloads it into ~/.m2 first)."""
    if shutil.which("mvn") is None:
        raise LabError("mvn is not installed (Debian package maven; `make apt` installs it)")
    say("  fetching %s with mvn (first time only)" % artifact.coordinate)
    argv = ["mvn", "-B", "-q", "--strict-checksums",
            "org.apache.maven.plugins:maven-dependency-plugin:3.6.1:copy",
            "-Dartifact=" + artifact.coordinate, "-DoutputDirectory=" + dest_dir]
    proc = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, check=False)
    path = os.path.join(dest_dir, artifact.filename)
    if proc.returncode != 0 or not os.path.isfile(path):
        raise LabError("downloading %s failed (mvn exit %d):\n%s"
                       % (artifact.coordinate, proc.returncode, proc.stdout.strip()[-3000:]))
    return path


def ensure_download(artifact, cache, fetch=maven_fetch):
    """Path of the verified download in the cache; fetch(artifact, dir) -> path when missing."""
    downloads = os.path.join(cache, "downloads")
    os.makedirs(downloads, exist_ok=True)
    path = os.path.join(downloads, artifact.filename)
    if not os.path.exists(path):
        tmp = tempfile.mkdtemp(dir=downloads, prefix=".fetch-")
        try:
            os.replace(fetch(artifact, tmp), path)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    actual = sha256_of(path)
    if actual != artifact.sha256:
        os.remove(path)
        raise LabError("checksum mismatch for %s: sha256 %s, expected %s; removed %s, run again to download it anew"
                       % (artifact.coordinate, actual, artifact.sha256, path))
    return path


def unzip_members(patterns, excludes=()):
    """Extractor: only the members matching the patterns (unzip keeps modes and links)."""
    def extract(archive, dest):
        argv = ["unzip", "-q", archive] + list(patterns) + (["-x"] + list(excludes) if excludes else []) + ["-d", dest]
        proc = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True, check=False)
        if proc.returncode != 0:
            raise LabError("unzip of %s failed (exit %d): %s" % (archive, proc.returncode, proc.stdout.strip()[-2000:]))
    return extract


def tarball_in_jar(member):
    """Extractor: a .tar.gz stored inside a jar."""
    def extract(archive, dest):
        with zipfile.ZipFile(archive) as jar, jar.open(member) as stream:
            with tarfile.open(fileobj=stream, mode="r|gz") as tar:
                tar.extractall(dest, filter="tar")
    return extract


@built_once(lambda name, artifact, extract, cache, fetch=None: os.path.join(cache, "dist", name))
def ensure_dist(name, artifact, extract, cache, fetch=maven_fetch):
    """cache/dist/<name>: extracted once into a temporary directory, then renamed into place."""
    dist_root = os.path.join(cache, "dist")
    dist = os.path.join(dist_root, name)
    if os.path.isdir(dist):
        return dist
    archive = ensure_download(artifact, cache, fetch)
    os.makedirs(dist_root, exist_ok=True)
    tmp = tempfile.mkdtemp(dir=dist_root, prefix="." + name + "-")
    try:
        say("  extracting %s into %s" % (os.path.basename(archive), dist))
        extract(archive, tmp)
        os.chmod(tmp, 0o755)
        os.rename(tmp, dist)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return dist
