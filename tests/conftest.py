import signal

import pytest
import torch

# Tests that send themselves SIGINT need Python's handler. A shell without job control starts a background
# job (`bash .ci/run &`) with SIGINT ignored, and Python then leaves it ignored: those tests would wait
# for a Ctrl-C that never lands. Restore the handler an interactive run has.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


def pytest_collection_modifyitems(config, items):
    if torch.cuda.is_available():
        return
    skip = pytest.mark.skip(reason="needs a CUDA GPU")
    for item in items:
        if "cuda" in item.keywords:
            item.add_marker(skip)
