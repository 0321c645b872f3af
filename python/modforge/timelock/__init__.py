"""Time-lock puzzles: create (with the trapdoor), solve (checked, checkpointed, resumable), inspect.

``create_puzzle`` writes a modforge puzzle file; ``resolve_puzzle`` reads one or
names a built-in historical puzzle (``lcs35``, ``lcs35-toy``, ``csail2019``);
``solve`` computes ``x^(2^t) mod n`` through :class:`modforge.engine.ModRing`
with Gerbicz's product check and crash-safe checkpoints; ``puzzle_info`` says
what a puzzle is and how long it takes here.  Formats: docs/timelock.md.
"""

from .check import CHECK_NAME, plan_segment, run_segment
from .checkpoint import CheckpointStore, default_checkpoint_dir
from .create import create_puzzle, generate_modulus
from .info import puzzle_info
from .puzzle import (AuthenticationError, NamedPuzzle, PuzzleFile, SquaringTask, TimelockError, load_puzzle_file,
                     named_puzzle, render_message, resolve_puzzle, trapdoor_solution)
from .solver import SolveInterrupted, SolveResult, solve

__all__ = ["AuthenticationError", "CHECK_NAME", "CheckpointStore", "NamedPuzzle", "PuzzleFile", "SolveInterrupted",
           "SolveResult", "SquaringTask", "TimelockError", "create_puzzle", "default_checkpoint_dir",
           "generate_modulus", "load_puzzle_file", "named_puzzle", "plan_segment", "puzzle_info", "render_message",
           "resolve_puzzle", "run_segment", "solve", "trapdoor_solution"]
