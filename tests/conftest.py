
# A script run by tests/test_simgrid_crosscheck.py under a Python with SimGrid's bindings,
# not a test module (its import of simgrid would fail here).
collect_ignore = ["simgrid/run_flows.py"]
