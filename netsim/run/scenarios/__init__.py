"""Scenario files and the job kinds they run.

* :mod:`.scenario`: a scenario file read and checked, its jobs run in order;
* :mod:`.jobs`: the job kinds' registry and the built-in ``traffic`` and ``flows`` kinds;
* :mod:`.collective_jobs`, :mod:`.placement_jobs`: the ``collective`` and ``placement``
  kinds (the Chakra ``workload`` kind registers in :mod:`netsim.run.traces`);
* :mod:`.faults`: a scenario's ``faults:`` lists.
"""
