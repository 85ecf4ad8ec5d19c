"""Placements of ranks and operators scored by simulation.

* :mod:`.evaluate`: one training or inference step under a placement (its phases'
  collectives on the machine), scored by simulation and by link loads;
* :mod:`.search`: the search over placements that is never worse than its seeds;
* :mod:`.study`: a placement comparison as one description, which ``netsim place`` and
  the scenario job kind both run;
* :mod:`.noc`: operators placed on a chip's cores (the NoC).
"""
