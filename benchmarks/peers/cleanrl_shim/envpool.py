"""``import envpool`` gives ``torchpool.envpool_compat`` (this folder first on ``PYTHONPATH``; run_cleanrl.sh)."""

import sys

import torchpool.envpool_compat

sys.modules[__name__] = torchpool.envpool_compat
