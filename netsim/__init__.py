"""netsim: a flow-level simulator of interconnect topologies and collective communication."""

__version__ = "0.1.0"
