"""modforge: big-integer modular arithmetic, modelled, generated as RTL and run natively."""

__version__ = "0.1.0"
