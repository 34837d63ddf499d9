"""The bound on a store's memory-mapped segment files (store/maps.py): small arrays are read
and hold no file; mapped ones stay within the bound, least recently read segment dropped
first, and a dropped segment reads the same arrays again. Descriptors are counted in /proc."""

from __future__ import annotations

import errno
import os
import resource
from pathlib import Path

import numpy as np
import pytest

from excerpt.edge.errors import INTERNAL, unexpected
from excerpt.errors import UnavailableError
from excerpt.store.maps import OpenMaps
from excerpt.store.segment import Segment, write_segment
from excerpt.types import Principal


def descriptors() -> int:
    return len(os.listdir("/proc/self/fd"))


def segments(root: Path, count: int, maps: OpenMaps) -> list[Segment]:
    out = []
    for i in range(count):
        tokens = [[f"w{i}", "common"], ["common", "x", "x"], [f"w{i}"]]
        vectors = np.eye(3, dtype=np.float32)
        write_segment(root / f"s{i}", ["a", "b", "c"], tokens, [()] * 3, [()] * 3, vectors, {})
        out.append(Segment(root / f"s{i}", f"s{i}", maps))
    return out


def read(segment: Segment) -> tuple[list[int], list[float], list[float], list[list[float]]]:
    vectors = segment.vectors
    assert vectors is not None
    return (segment.post_docs.tolist(), segment.post_tf.tolist(), segment.doc_len.tolist(),
            vectors.tolist())


def test_small_arrays_are_read_and_hold_no_file(tmp_path: Path) -> None:
    maps = OpenMaps(limit=4)
    before = descriptors()
    for segment in segments(tmp_path, 20, maps):
        read(segment)
        segment.visible(Principal.anonymous())
    assert (maps.open, maps.dropped, descriptors()) == (0, 0, before)


def test_mapped_arrays_stay_within_the_bound_and_read_the_same_again(tmp_path: Path) -> None:
    maps = OpenMaps(limit=8, read_below=0)  # every array mapped
    every = segments(tmp_path, 6, maps)
    first = [read(segment) for segment in every]
    before = descriptors()
    for _ in range(3):
        assert [read(segment) for segment in every] == first
        assert maps.open <= 8
    assert maps.dropped > 0 and descriptors() <= before + 8
    maps.close()
    assert maps.open == 0 and all(segment.mapped == {} for segment in every)


def test_the_least_recently_read_segment_is_dropped_first(tmp_path: Path) -> None:
    maps = OpenMaps(limit=2, read_below=0)
    a, b, c = segments(tmp_path, 3, maps)
    for segment, array in ((a, "post_docs"), (b, "post_docs"), (a, "post_docs"), (c, "doc_len")):
        getattr(segment, array)  # a read: mapped, or made the most recent
    assert [list(s.mapped) for s in (a, b, c)] == [["post_docs.npy"], [], ["doc_len.npy"]]
    b.post_tf  # noqa: B018
    assert [list(s.mapped) for s in (a, b, c)] == [[], ["post_tf.npy"], ["doc_len.npy"]]


def test_a_segment_never_drops_its_own_maps_for_itself(tmp_path: Path) -> None:
    maps = OpenMaps(limit=1, read_below=0)
    (segment,) = segments(tmp_path, 1, maps)
    read(segment)
    assert maps.open == 4 and maps.dropped == 0  # over the bound: the one segment read
    segment.close()
    assert maps.open == 0 and segment.mapped == {}


def test_out_of_descriptors_is_unavailable_not_an_os_error(tmp_path: Path) -> None:
    (segment,) = segments(tmp_path, 1, OpenMaps(read_below=0))
    held = {int(fd) for fd in os.listdir("/proc/self/fd")}
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    # no descriptor free under the limit: the next open or map fails with EMFILE
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(set(range(len(held) + 1)) - held), hard))
    try:
        with pytest.raises(UnavailableError) as caught:
            segment.post_docs  # noqa: B018
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    assert str(caught.value).startswith("too many open files in this process: ")
    assert str(tmp_path) not in str(caught.value)
    assert segment.post_docs.tolist() == [0, 1, 0, 2, 1]  # and reads once there are files


def test_the_service_answers_an_exhausted_process_503_and_other_failures_500() -> None:
    status, body = unexpected(RuntimeError("x"))
    assert (status, body) == (500, INTERNAL)
    wrapped = RuntimeError("failed")
    wrapped.__cause__ = OSError(errno.EMFILE, "Too many open files", "/srv/excerpt/x")
    status, body = unexpected(wrapped)
    assert (status, body["kind"]) == (503, "unavailable") and "/srv" not in body["error"]
    assert unexpected(OSError(errno.ENOENT, "No such file"))[0] == 500
