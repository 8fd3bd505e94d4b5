"""The env families' registration files, one per family beside its C++ (``csrc/envs/<family>/``).

Each file declares the extension module that steps its families (``_family_modules.FamilyModule``: the
module, the extra that installs what it needs, what to do before importing it) and registers its ids
through it, with their kwargs, defaults and docs. Importing this package runs them all, in this order
(``python -m torchpool list`` and docs/envs.md list the families in it). A new family is a file here and
a line below (docs/design.md, "Adding an env family").
"""

from . import classic, mujoco, dmc, atari, minigrid, testing  # noqa: I001  (the order families are listed in)
from . import babyai  # noqa: F401  (BabyAI's levels, in the MiniGrid module: listed with minigrid's ids)

FILES = (classic, mujoco, dmc, atari, minigrid, testing)
