"""``tilelab.layouts.fragment_record`` tabulates a bare ``Fragment`` like the layouts of a compile."""

from __future__ import annotations

import numpy as np


def test_fragment_record_tabulates_the_mma_base_fragment():
    from tilelang.layout import Fragment

    from tilelab.layouts import fragment_record
    from tilelab.records import LayoutKind

    base = Fragment([8, 8], forward_thread_fn=lambda i, j: i * 4 + j // 2, forward_index_fn=lambda i, j: j % 2)

    record = fragment_record(base, "base")

    assert record.kind is LayoutKind.FRAGMENT
    assert (record.buffer, record.shape, record.threads, record.replicas) == ("base", (8, 8), 32, 1)
    rows, cols = np.indices((8, 8))
    assert np.array_equal(record.thread[0], rows * 4 + cols // 2)
    assert np.array_equal(record.local_index[0], cols % 2)


def test_fragment_record_keeps_replicas_of_a_replicated_fragment():
    from tilelang.layout import make_gemm_fragment_8x8

    from tilelab.layouts import fragment_record

    record = fragment_record(make_gemm_fragment_8x8().replicate(2), "twice")

    assert (record.replicas, record.threads, record.thread.shape) == (2, 64, (2, 8, 8))
    assert np.array_equal(record.thread[1], record.thread[0] + 32)
