"""The record kernels (compiled by numba, one file per pass in ``jit``) and the constants of ``layout``,
under one name for their callers: ``from . import kernels as K``."""

from .jit import *  # noqa: F403
from .layout import *  # noqa: F403
