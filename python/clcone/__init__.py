"""clcone: frictional contact problems solved on OpenCL devices, from
Python. numpy in, numpy out; every computation is the C library's
(libclcone, shipped inside this package). See python/README.md."""
from ._api import (Device, DeviceInfo, History, Offer, Plan, Problem, ProblemResult, Result, Scene, Simulation, Step,
                   batch, devices, generate, read, read_reactions, simulate, solve, solvers, step_together, version,
                   write, write_reactions)
from ._native import (Cancel, DeviceError, Error, FileError, FormatError, InvalidInput, NotSupported, OutOfMemory)

#: The library's version, CLCONE_VERSION of include/clcone/base.h as the
#: loaded libclcone reports it.
__version__ = version()

__all__ = ["Cancel", "Device", "DeviceError", "DeviceInfo", "Error", "FileError", "FormatError", "History",
           "InvalidInput", "NotSupported", "Offer", "OutOfMemory", "Plan", "Problem", "ProblemResult", "Result",
           "Scene", "Simulation", "Step", "batch", "devices", "generate", "read", "read_reactions", "simulate",
           "solve", "solvers", "step_together", "version", "write", "write_reactions", "__version__"]
