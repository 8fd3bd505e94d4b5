"""Every notebook in tutorials/ runs top to bottom in smoke mode, without an error.

Smoke mode is ``TORCHPOOL_SMOKE=1``: each notebook's first code cell reads it and shrinks its
budgets (frames, repeats, timing) so it runs in seconds. The notebooks are executed in memory by
nbclient, in a temporary working directory (so ``runs/`` and MuJoCo's log land there); the files on
disk, with the outputs of their full run, are never written.

A notebook that needs a CUDA GPU says so in its metadata, ``{"torchpool": {"needs_gpu": true}}``,
and is then marked ``cuda`` (skipped without one, as tests/conftest.py does for every such test).
"""

from pathlib import Path

import nbformat
import pytest
from ipykernel.kernelspec import write_kernel_spec
from nbclient import NotebookClient

TUTORIALS = Path(__file__).resolve().parent.parent / "tutorials"
CELL_TIMEOUT_S = 300


def _notebook_params() -> list:
    params = []
    for path in sorted(TUTORIALS.glob("*.ipynb")):
        needs_gpu = nbformat.read(path, as_version=4).metadata.get("torchpool", {}).get("needs_gpu", False)
        params.append(pytest.param(path, id=path.stem, marks=[pytest.mark.cuda] if needs_gpu else []))
    return params


@pytest.fixture(scope="module")
def jupyter_path(tmp_path_factory) -> Path:
    """A Jupyter data dir whose ``python3`` kernel is this interpreter (``sys.executable``), so the
    notebooks see the same torchpool as the tests whatever other kernels are installed."""
    root = tmp_path_factory.mktemp("jupyter")
    write_kernel_spec(str(root / "kernels" / "python3"))
    return root


def test_tutorials_are_found():
    assert len(_notebook_params()) >= 3, f"expected the tutorial notebooks in {TUTORIALS}"


@pytest.mark.slow
@pytest.mark.parametrize("path", _notebook_params())
def test_notebook_runs_in_smoke_mode(path: Path, tmp_path: Path, jupyter_path: Path, monkeypatch):
    monkeypatch.setenv("TORCHPOOL_SMOKE", "1")        # the kernel inherits this process's environment
    monkeypatch.setenv("JUPYTER_PATH", str(jupyter_path))  # searched before the user's and the venv's kernels
    notebook = nbformat.read(path, as_version=4)
    client = NotebookClient(notebook, timeout=CELL_TIMEOUT_S, kernel_name="python3",
                            resources={"metadata": {"path": str(tmp_path)}})
    client.execute()  # raises CellExecutionError, with the cell and its traceback, on any error
