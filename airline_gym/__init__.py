"""airline-gym: a fast, faithful Gymnasium environment for the tau2-bench airline domain."""

__version__ = "0.1.0"
