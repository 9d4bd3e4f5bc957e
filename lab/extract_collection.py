"""Copy one collection out of the `ansible` bundle wheel into a collections path.

Galaxy is not reachable from every machine; PyPI is. The `ansible` wheel carries
community.mysql under ansible_collections/community/mysql/.

usage: extract_collection.py WHEEL NAMESPACE/NAME DEST_COLLECTIONS_PATH
"""
import os
import shutil
import sys
import tempfile
import zipfile


def main(argv):
    if len(argv) != 4:
        sys.exit(__doc__)
    wheel, fqcn, dest = argv[1:]
    prefix = "ansible_collections/%s/" % fqcn.strip("/")
    target = os.path.join(dest, "ansible_collections", *fqcn.split("/"))
    with zipfile.ZipFile(wheel) as zf:
        names = [n for n in zf.namelist() if n.startswith(prefix)]
        if not names:
            sys.exit("ERROR: %s holds no %s" % (wheel, prefix))
        tmp = tempfile.mkdtemp(dir=dest)
        try:
            for name in names:
                zf.extract(name, tmp)
            if os.path.isdir(target):
                shutil.rmtree(target)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            os.rename(os.path.join(tmp, *prefix.strip("/").split("/")), target)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    print("installed %s from %s into %s" % (fqcn.replace("/", "."), os.path.basename(wheel), dest))


if __name__ == "__main__":
    main(sys.argv)
