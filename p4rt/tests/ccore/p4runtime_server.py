"""A P4Runtime server on gRPC C-core (grpcio), with the official bindings.

It behaves the way PI's server in simple_switch_grpc does where our client
could trip: it says nothing on the stream channel (not even response
headers) until the client's arbitration arrives, and it keeps C-core's
default keepalive policy (one ping per 5 minutes without data, GOAWAY
too_many_pings after two strikes). It checks device id, election id and
role like PI, needs a pipeline (P4Info and a JSON device config) before
table writes, stores what Write sends so that Read returns it, and echoes
every packet-out as a packet-in.

Prints "listening <port>" once serving. Run from outside the repository
root (the repository has a p4/ directory that shadows the bindings).
"""

import json
import queue
import sys
import threading
from concurrent import futures

import grpc
from google.rpc import code_pb2, status_pb2
from p4.v1 import p4runtime_pb2, p4runtime_pb2_grpc

DEVICE_ID = int(sys.argv[1]) if len(sys.argv) > 1 else 1


def uint128(u):
    return (u.high << 64) | u.low


def entry_key(e):
    matches = sorted(e.match, key=lambda m: m.field_id)
    return (e.table_id, e.is_default_action, e.priority,
            tuple(m.SerializeToString(deterministic=True) for m in matches))


class Device(p4runtime_pb2_grpc.P4RuntimeServicer):
    def __init__(self):
        self.lock = threading.Lock()
        self.primary = None  # (election id, stream's outbox)
        self.config = None
        self.entries = {}

    def _check(self, context, device_id, election_id=None, role=""):
        if device_id != DEVICE_ID:
            context.abort(grpc.StatusCode.NOT_FOUND, f"no device {device_id}")
        if role:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"unknown role {role}")
        if election_id is not None:
            with self.lock:
                primary = self.primary
            if primary is None or uint128(election_id) != primary[0]:
                context.abort(grpc.StatusCode.PERMISSION_DENIED, "not primary")

    def StreamChannel(self, request_iterator, context):
        outbox = queue.Queue()
        me = {"election": None}

        def reader():
            for req in request_iterator:
                kind = req.WhichOneof("update")
                if kind == "arbitration":
                    a = req.arbitration
                    if a.device_id != DEVICE_ID or a.role.name:
                        outbox.put(None)
                        return
                    election = uint128(a.election_id)
                    with self.lock:
                        if self.primary is None or election >= self.primary[0]:
                            self.primary = (election, outbox)
                        primary = self.primary[0]
                    me["election"] = election
                    reply = p4runtime_pb2.StreamMessageResponse()
                    reply.arbitration.device_id = DEVICE_ID
                    reply.arbitration.election_id.high = primary >> 64
                    reply.arbitration.election_id.low = primary & (2**64 - 1)
                    reply.arbitration.status.code = (
                        code_pb2.OK if primary == election else code_pb2.ALREADY_EXISTS)
                    outbox.put(reply)
                elif kind == "packet":
                    with self.lock:
                        is_primary = (self.primary is not None
                                      and self.primary[0] == me["election"])
                    if is_primary:
                        reply = p4runtime_pb2.StreamMessageResponse()
                        reply.packet.payload = req.packet.payload
                        reply.packet.metadata.extend(req.packet.metadata)
                        outbox.put(reply)
            outbox.put(None)

        threading.Thread(target=reader, daemon=True).start()
        try:
            while True:
                msg = outbox.get()
                if msg is None:
                    return
                yield msg
        finally:
            with self.lock:
                if self.primary is not None and self.primary[1] is outbox:
                    self.primary = None

    def SetForwardingPipelineConfig(self, request, context):
        self._check(context, request.device_id, request.election_id, request.role)
        blob = request.config.p4_device_config
        try:
            json.loads(blob.decode())
        except (UnicodeDecodeError, ValueError) as e:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"device config is not bmv2 JSON: {e}")
        with self.lock:
            self.config = p4runtime_pb2.ForwardingPipelineConfig()
            self.config.CopyFrom(request.config)
            self.entries = {}
        return p4runtime_pb2.SetForwardingPipelineConfigResponse()

    def GetForwardingPipelineConfig(self, request, context):
        self._check(context, request.device_id)
        with self.lock:
            config = self.config
        if config is None:
            context.abort(grpc.StatusCode.FAILED_PRECONDITION, "no forwarding pipeline config set")
        response = p4runtime_pb2.GetForwardingPipelineConfigResponse()
        response.config.p4info.CopyFrom(config.p4info)
        response.config.cookie.CopyFrom(config.cookie)
        return response

    def Write(self, request, context):
        self._check(context, request.device_id, request.election_id, request.role)
        Update = p4runtime_pb2.Update
        with self.lock:
            if self.config is None:
                context.abort(grpc.StatusCode.FAILED_PRECONDITION, "no pipeline")
            for u in request.updates:
                if u.entity.WhichOneof("entity") != "table_entry":
                    context.abort(grpc.StatusCode.UNIMPLEMENTED, "only table entries")
                e = u.entity.table_entry
                k = entry_key(e)
                if u.type == Update.INSERT and k in self.entries:
                    context.abort(grpc.StatusCode.ALREADY_EXISTS, "entry exists")
                if u.type == Update.INSERT and e.is_default_action:
                    context.abort(grpc.StatusCode.INVALID_ARGUMENT, "default entries are modified")
                if u.type == Update.MODIFY and k not in self.entries and not e.is_default_action:
                    context.abort(grpc.StatusCode.NOT_FOUND, "no such entry")
                if u.type == Update.DELETE:
                    if k not in self.entries:
                        context.abort(grpc.StatusCode.NOT_FOUND, "no such entry")
                    del self.entries[k]
                else:
                    stored = p4runtime_pb2.TableEntry()
                    stored.CopyFrom(e)
                    self.entries[k] = stored
        return p4runtime_pb2.WriteResponse()

    def Read(self, request, context):
        self._check(context, request.device_id)
        response = p4runtime_pb2.ReadResponse()
        with self.lock:
            for f in request.entities:
                if f.WhichOneof("entity") != "table_entry":
                    context.abort(grpc.StatusCode.UNIMPLEMENTED, "only table entries")
                t = f.table_entry
                for k, e in sorted(self.entries.items()):
                    if t.table_id and e.table_id != t.table_id:
                        continue
                    if e.is_default_action != t.is_default_action:
                        continue
                    if t.match and entry_key(t)[3] != k[3]:
                        continue
                    response.entities.add().table_entry.CopyFrom(e)
        yield response

    def Capabilities(self, request, context):
        return p4runtime_pb2.CapabilitiesResponse(p4runtime_api_version="1.3.0")


def main():
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=16))
    p4runtime_pb2_grpc.add_P4RuntimeServicer_to_server(Device(), server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    print(f"listening {port}", flush=True)
    server.wait_for_termination()


if __name__ == "__main__":
    main()
