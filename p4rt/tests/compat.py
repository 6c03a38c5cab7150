"""Checks intpath's P4Runtime .proto definitions against the official ones.

Run by p4rt/tests/python_compat/main.rs, which writes into DIR:
  ours.desc          our FileDescriptorSet (as compiled by protox)
  samples.json       [{"name": ..., "type": "p4.v1.WriteRequest"}, ...]
  NAME.bin           each sample as Rust encodes it

This script
  1. compares every message, field, enum and service method we define with
     the official descriptors of the `p4runtime` package (name, number, type,
     label, type name, oneof);
  2. decodes every Rust sample with the official classes and requires no
     unknown fields (every field Rust wrote is one the official schema knows);
  3. writes NAME.py.bin, the official re-encoding, which Rust decodes and
     compares with what it sent.
Every problem is printed as one line naming the exact message and field.
Needs PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION=python (the bindings predate
the C++ runtime's descriptor checks).
"""

import json
import sys
from pathlib import Path

from google.protobuf import descriptor_pb2, descriptor_pool
from google.protobuf import message_factory, unknown_fields

import p4.v1.p4runtime_pb2  # noqa: F401  (registers the official descriptors)
import p4.config.v1.p4info_pb2  # noqa: F401
import google.rpc.status_pb2  # noqa: F401
import google.rpc.code_pb2  # noqa: F401

F = descriptor_pb2.FieldDescriptorProto
TYPES = {v: k for k, v in F.Type.items()}
LABELS = {v: k for k, v in F.Label.items()}
OFFICIAL = descriptor_pool.Default()


def label_of(field):
    # `label` is deprecated in newer protobuf releases; `_label` keeps it.
    return getattr(field, "_label", None) or field.label


def official(find, name, kind, problems):
    """The official descriptor of `name`, or None with the problem noted."""
    try:
        return find(name)
    except KeyError:
        problems.append(f"{kind} {name}: not in the official P4Runtime")
        return None


def paired(kind, container, parent, ours, official, problems):
    """(where, ours, official) for every item both sides name alike; an item
    only one side has is a problem."""
    official = {o.name: o for o in official}
    for item in ours:
        where = f"{kind} {parent}.{item.name}"
        o = official.pop(item.name, None)
        if o is None:
            problems.append(f"{where}: not in the official {container}")
        else:
            yield where, item, o
    for missing in official:
        problems.append(f"{kind} {parent}.{missing}: official {kind} missing from ours")


def compare_message(name, ours, problems):
    off = official(OFFICIAL.FindMessageTypeByName, name, "message", problems)
    if off is None:
        return
    for where, f, o in paired("field", "message", name, ours.field, off.fields, problems):
        if f.number != o.number:
            problems.append(f"{where}: number {f.number}, official {o.number}")
        if f.type != o.type:
            problems.append(f"{where}: type {TYPES[f.type]}, official {TYPES[o.type]}")
        if f.label != label_of(o):
            problems.append(
                f"{where}: label {LABELS[f.label]}, official {LABELS[label_of(o)]}"
            )
        ref = o.message_type or o.enum_type
        official_type = ref.full_name if ref else ""
        if f.type_name.lstrip(".") != official_type:
            problems.append(
                f"{where}: type name {f.type_name.lstrip('.')!r}, official {official_type!r}"
            )
        our_oneof = ours.oneof_decl[f.oneof_index].name if f.HasField("oneof_index") else None
        if f.proto3_optional:
            our_oneof = None
        off_oneof = o.containing_oneof.name if o.containing_oneof else None
        if off_oneof and off_oneof.startswith("_") and o.containing_oneof.fields == [o]:
            off_oneof = None  # synthetic oneof of a proto3 `optional`
        if our_oneof != off_oneof:
            problems.append(f"{where}: oneof {our_oneof!r}, official {off_oneof!r}")
    for e in ours.enum_type:
        compare_enum(f"{name}.{e.name}", e, problems)


def compare_enum(full_name, ours, problems):
    off = official(OFFICIAL.FindEnumTypeByName, full_name, "enum", problems)
    if off is None:
        return
    for where, v, o in paired("enum value", "enum", full_name, ours.value, off.values, problems):
        if v.number != o.number:
            problems.append(f"{where}: number {v.number}, official {o.number}")


def compare_service(package, ours, problems):
    full = f"{package}.{ours.name}"
    off = official(OFFICIAL.FindServiceByName, full, "service", problems)
    if off is None:
        return
    # Descriptors built by old-style generated code lack the streaming flags;
    # the file's serialized FileDescriptorProto has them.
    off_file = descriptor_pb2.FileDescriptorProto.FromString(off.file.serialized_pb)
    off_service = next(s for s in off_file.service if s.name == ours.name)
    for where, m, o in paired("method", "service", full, ours.method, off_service.method, problems):
        for what, a, b in [
            ("input", m.input_type, o.input_type),
            ("output", m.output_type, o.output_type),
            ("client streaming", m.client_streaming, o.client_streaming),
            ("server streaming", m.server_streaming, o.server_streaming),
        ]:
            if a != b:
                problems.append(f"{where}: {what} {a!r}, official {b!r}")


def walk(prefix, messages):
    """(full name, DescriptorProto) of every message, nested ones included."""
    for m in messages:
        full_name = f"{prefix}.{m.name}"
        yield full_name, m
        yield from walk(full_name, m.nested_type)


def compare_descriptors(fds, problems):
    checked = 0
    for file in fds.file:
        if file.package == "google.protobuf":
            continue  # well-known types come with protobuf itself
        for full_name, m in walk(file.package, file.message_type):
            compare_message(full_name, m, problems)
            checked += 1
        for e in file.enum_type:
            compare_enum(f"{file.package}.{e.name}", e, problems)
        for s in file.service:
            compare_service(file.package, s, problems)
    return checked


def unknown_fields_at(msg, path):
    """Paths of (sub)messages carrying fields the official schema lacks."""
    found = []
    if len(unknown_fields.UnknownFieldSet(msg)):
        found.append(path or "<top>")
    for field, value in msg.ListFields():
        if field.message_type is None:
            continue
        if field.message_type.GetOptions().map_entry:
            # Depending on how the bindings were generated, a map is a dict-like
            # container or a list of entry messages; the entries are checked.
            if hasattr(value, "items"):
                values = [v for v in value.values() if hasattr(v, "ListFields")]
            else:
                values = list(value)
            items = [(f"[{i}]", v) for i, v in enumerate(values)]
        elif label_of(field) == F.LABEL_REPEATED:
            items = [(f"[{i}]", v) for i, v in enumerate(value)]
        else:
            items = [("", value)]
        for suffix, item in items:
            found += unknown_fields_at(item, f"{path}.{field.name}{suffix}")
    return found


def check_samples(directory, problems):
    samples = json.loads((directory / "samples.json").read_text())
    for s in samples:
        cls = message_factory.GetMessageClass(OFFICIAL.FindMessageTypeByName(s["type"]))
        where = f"sample {s['name']} ({s['type']})"
        msg = cls.FromString((directory / f"{s['name']}.bin").read_bytes())
        for path in unknown_fields_at(msg, ""):
            problems.append(f"{where}: official decoding has unknown fields at {path}")
        (directory / f"{s['name']}.py.bin").write_bytes(msg.SerializeToString())
    return len(samples)


def main():
    directory = Path(sys.argv[1])
    fds = descriptor_pb2.FileDescriptorSet.FromString((directory / "ours.desc").read_bytes())
    problems = []
    messages = compare_descriptors(fds, problems)
    samples = check_samples(directory, problems)
    for p in problems:
        print(p)
    if problems:
        print(f"{len(problems)} incompatibilities with the official P4Runtime")
        sys.exit(1)
    print(f"ok: {messages} messages match the official descriptors, {samples} samples round-trip")


if __name__ == "__main__":
    main()
