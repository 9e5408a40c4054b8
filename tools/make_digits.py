"""Build data/digits.npz from scikit-learn's copy of the UCI optdigits test set (byte-reproducible).

Usage, in a throwaway environment (scikit-learn is not a course dependency):
    python -m venv /tmp/sk && /tmp/sk/bin/pip install scikit-learn
    /tmp/sk/bin/python -m tools.make_digits data/digits.npz
then compare the printed SHA-256 with data/SOURCES.md.
"""

import gzip
import hashlib
import io
import os
import sys
import zipfile

import numpy as np
import sklearn
import sklearn.datasets as d

src = os.path.join(os.path.dirname(d.__file__), "data", "digits.csv.gz")
print("sklearn", sklearn.__version__, "source sha256", hashlib.sha256(open(src, "rb").read()).hexdigest())
raw = np.loadtxt(gzip.open(src), delimiter=",", dtype=np.int64)
print(raw.shape)
images = raw[:, :64].reshape(-1, 8, 8)
labels = raw[:, 64]
bunch = d.load_digits()
assert np.array_equal(bunch.images.astype(np.int64), images) and np.array_equal(bunch.target, labels)
assert images.min() == 0 and images.max() == 16 and labels.min() == 0 and labels.max() == 9
images = images.astype(np.uint8)
labels = labels.astype(np.uint8)

out = sys.argv[1]
with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as zf:
    for name, arr in (("images", images), ("labels", labels)):
        info = zipfile.ZipInfo(name + ".npy", date_time=(1998, 7, 1, 0, 0, 0))
        info.compress_type = zipfile.ZIP_DEFLATED
        info.external_attr = 0o644 << 16
        buf = io.BytesIO()
        np.lib.format.write_array(buf, np.ascontiguousarray(arr), allow_pickle=False)
        zf.writestr(info, buf.getvalue(), compresslevel=9)
print("wrote", out, os.path.getsize(out), "bytes, sha256", hashlib.sha256(open(out, "rb").read()).hexdigest())
print("class counts", np.bincount(labels).tolist())
print("images sha256 of raw bytes", hashlib.sha256(images.tobytes()).hexdigest())
