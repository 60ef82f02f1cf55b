"""One session, 4 Python threads x 50 runs with the GIL released: every result identical."""

import threading

import numpy as np

import attune
from conftest import load_feeds


def test_four_threads_fifty_runs_identical(root):
    folder = root / "models" / "mha_causal"
    s = attune.InferenceSession(folder / "model.onnx", threads=1)
    feeds = load_feeds(folder)
    expected = s.run(None, feeds)[0].copy()
    mismatches, errors = [], []

    def worker(index):
        try:
            for _ in range(50):
                y = s.run(None, feeds)[0]
                if not np.array_equal(y, expected):
                    mismatches.append(index)
        except Exception as e:  # surfaced below: a thread's exception does not fail the test itself
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert mismatches == []
