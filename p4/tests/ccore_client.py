"""Sends one Write to a P4Runtime server from gRPC C-core (grpcio), with
the official bindings, as the primary: how a Python controller (or PI's
tools) sees a refused batch, with C-core's metadata limits (8 KiB soft,
16 KiB hard by default).

Usage: ccore_client.py ADDR REQUEST_FILE, where REQUEST_FILE holds a
serialized p4.v1.WriteRequest (device id and election id included).
Prints one line: "code NAME details BYTES", then the status message.
Run from outside the repository root (its p4/ directory would shadow the
bindings).
"""

import os
import queue
import sys

import grpc
from google.rpc import status_pb2
from p4.v1 import p4runtime_pb2, p4runtime_pb2_grpc

addr, path = sys.argv[1], sys.argv[2]
with open(path, "rb") as f:
    request = p4runtime_pb2.WriteRequest.FromString(f.read())

channel = grpc.insecure_channel(addr)
stub = p4runtime_pb2_grpc.P4RuntimeStub(channel)
outbox = queue.Queue()
arbitration = p4runtime_pb2.StreamMessageRequest()
arbitration.arbitration.device_id = request.device_id
arbitration.arbitration.election_id.CopyFrom(request.election_id)
outbox.put(arbitration)
stream = stub.StreamChannel(iter(outbox.get, None))
reply = next(stream)
assert reply.arbitration.status.code == 0, reply

try:
    stub.Write(request, timeout=10)
    print("code OK details 0")
    print("")
except grpc.RpcError as e:
    details = b""
    for key, value in e.trailing_metadata() or ():
        if key == "grpc-status-details-bin":
            details = value
    print(f"code {e.code().name} details {len(details)}")
    print(e.details())
    if details:
        status_pb2.Status.FromString(details)
outbox.put(None)
stream.cancel()
channel.close()
# grpcio's threads can keep the interpreter from finishing once the
# channel is closed (seen in CI: the client hung after its answer, with no
# socket left); what was to be said is said, so leave at once.
sys.stdout.flush()
os._exit(0)
