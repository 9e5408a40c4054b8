"""The shipped digits file: its checksum, its contents, and clear errors when it is missing or altered."""

import hashlib
import shutil

import numpy as np
import pytest
import torch

from course_lib.data import DIGITS_SHA256, DataFileError, load_digits
from course_lib.paths import DATA_DIR, ROOT

#: class counts of the 1,797 images of the UCI optdigits test set (as documented with scikit-learn's copy)
CLASS_COUNTS = [178, 182, 177, 183, 181, 182, 181, 179, 174, 180]


def test_shipped_file_matches_its_checksum_and_sources_md():
    digest = hashlib.sha256((DATA_DIR / "digits.npz").read_bytes()).hexdigest()
    assert digest == DIGITS_SHA256
    sources = (ROOT / "data" / "SOURCES.md").read_text(encoding="utf-8")
    assert "digits.npz" in sources and DIGITS_SHA256 in sources and "CC BY 4.0" in sources


def test_digits_contents():
    images, labels = load_digits()
    assert images.shape == (1797, 1, 8, 8) and images.dtype == torch.float32
    assert labels.shape == (1797,) and labels.dtype == torch.int64
    assert images.min() == 0 and images.max() == 1
    assert torch.bincount(labels).tolist() == CLASS_COUNTS
    raw, raw_labels = load_digits(scale=False)
    assert raw.dtype == torch.uint8 and int(raw.max()) == 16
    torch.testing.assert_close(raw.float() / 16, images)
    assert torch.equal(raw_labels, labels)
    assert labels[:10].tolist() == list(range(10))  # the file starts 0, 1, ..., 9
    # pixel values are counts of "on" pixels in 4 x 4 blocks: integers 0..16 only
    assert set(raw.unique().tolist()) <= set(range(17))
    # the border columns of the digits are almost always empty (the digits are centred)
    assert raw[..., 0].float().mean() < 0.5 < raw[..., 3].float().mean()


def test_missing_file_raises_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"digits data file .* is missing.*git checkout data/digits.npz"):
        load_digits(tmp_path / "digits.npz")


def test_altered_file_raises_a_clear_error(tmp_path):
    copy = tmp_path / "digits.npz"
    shutil.copy(DATA_DIR / "digits.npz", copy)
    load_digits(copy)  # an exact copy loads
    data = bytearray(copy.read_bytes())
    data[len(data) // 2] ^= 0xFF
    copy.write_bytes(bytes(data))
    with pytest.raises(DataFileError, match=rf"SHA-256 is [0-9a-f]{{64}}, expected {DIGITS_SHA256}"):
        load_digits(copy)
    assert issubclass(DataFileError, ValueError)


def test_a_different_valid_npz_is_refused(tmp_path):
    other = tmp_path / "digits.npz"
    np.savez_compressed(other, images=np.zeros((1797, 8, 8), np.uint8), labels=np.zeros(1797, np.uint8))
    with pytest.raises(DataFileError, match="not the digits data file"):
        load_digits(other)
