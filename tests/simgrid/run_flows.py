"""Run flows on a SimGrid platform and print their finish times (JSON): the SimGrid side
of tests/test_simgrid_crosscheck.py. Runs under any Python that has SimGrid's bindings
(Debian: python3-simgrid); it imports nothing of netsim.

    python run_flows.py PLATFORM.xml FLOWS.json   # FLOWS: [[src, dst, bytes, start_s], ...]
"""
import json
import sys

from simgrid import Actor, Engine, Host, Mailbox, this_actor

platform, flows_file = sys.argv[1], sys.argv[2]
flows = json.load(open(flows_file))
# CM02: max-min sharing without LV08's TCP factors; no reverse (ACK) cross-traffic
engine = Engine(["netsim-check", "--cfg=network/model:CM02", "--cfg=network/crosstraffic:0",
                 "--cfg=maxmin/precision:1e-13", "--cfg=surf/precision:1e-13",
                 "--log=root.thres:critical"])
engine.load_platform(platform)
finish = [None] * len(flows)


def sender(i, size, start):
    if start > 0:
        this_actor.sleep_for(start)
    Mailbox.by_name(f"m{i}").put(i, size)


def receiver(i):
    Mailbox.by_name(f"m{i}").get()
    finish[i] = Engine.clock


for i, (src, dst, size, start) in enumerate(flows):
    Actor.create(f"s{i}", Host.by_name(src), sender, i, int(size), float(start))
    Actor.create(f"r{i}", Host.by_name(dst), receiver, i)
engine.run()
print(json.dumps(finish))
