"""Schema resolution (the Avro specification's rules for reading data written with one schema as another).

:func:`resolve` checks that data of the writer's schema can be read as the reader's and returns the plan
the program builder follows; a pair that cannot be resolved raises :class:`ResolutionError` naming the
field path. The rules:

* records: fields matched by name or by the reader field's aliases; writer fields the reader lacks are
  skipped; reader fields the writer lacks take their default (an error when there is none). Record, enum
  and fixed names are not compared (Java's resolver does not either), except to choose a union branch;
* promotions: int -> long, float, double; long -> float, double; float -> double; string <-> bytes;
* enums: a writer symbol the reader lacks reads as the reader's default symbol, or fails for that record;
* fixed: sizes must be equal;
* unions: a writer union resolves branch by branch (a branch the reader cannot read fails only the records
  that use it); a writer non-union picks the reader's branch as Java's Avro does: the same type (same full
  name for named types, a structurally matching record otherwise), else the first promotion;
* logical types: Avro ignores them, which would silently rescale values; so a decimal read as a decimal
  must keep its scale, and a timestamp or time must keep its unit (millis vs micros vs nanos).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import ResolutionError
from .model import Array, Enum, Field, Fixed, Map, Named, Primitive, Record, Schema, Union

_PROMOTIONS = {"int": ("long", "float", "double"), "long": ("float", "double"), "float": ("double",),
               "string": ("bytes",), "bytes": ("string",)}
_UNITS = {"timestamp-millis": "millis", "local-timestamp-millis": "millis", "time-millis": "millis",
          "timestamp-micros": "micros", "local-timestamp-micros": "micros", "time-micros": "micros",
          "timestamp-nanos": "nanos", "local-timestamp-nanos": "nanos"}


@dataclass
class Plan:
    writer: Schema
    reader: Schema | None


@dataclass
class Read(Plan):
    """A primitive, fixed or enum value read as the reader's type (with a promotion if the types differ)."""


@dataclass
class Skip(Plan):
    """A writer value the reader has no place for."""


@dataclass
class EnumPlan(Plan):
    mapping: list[int] = field(default_factory=list)  # writer symbol -> reader symbol, -1: fails


@dataclass
class RecordPlan(Plan):
    steps: list[tuple[Field, int, Plan]] = field(default_factory=list)  # writer order; reader index -1: skip
    missing: list[int] = field(default_factory=list)  # reader fields filled from their defaults


@dataclass
class ArrayPlan(Plan):
    items: Plan | None = None


@dataclass
class MapPlan(Plan):
    values: Plan | None = None


@dataclass
class WriterUnionPlan(Plan):
    branches: list[Plan | str] = field(default_factory=list)  # a string says why that branch cannot be read


@dataclass
class ReaderBranchPlan(Plan):
    index: int = 0  # the reader union's branch
    inner: Plan | None = None


def resolve(writer: Schema, reader: Schema, path: str = "") -> Plan:
    """The plan to read ``writer`` data as ``reader``; :class:`ResolutionError` when it cannot be."""
    if isinstance(writer, Union):
        branches: list[Plan | str] = []
        for wb in writer.branches:
            try:
                branches.append(resolve(wb, reader, path))
            except ResolutionError as exc:
                branches.append(str(exc))
        if branches and all(isinstance(b, str) for b in branches):
            raise ResolutionError(f"no branch of the writer's union {writer.describe()} can be read as "
                                  f"{reader.describe()}", path)
        return WriterUnionPlan(writer, reader, branches)
    if isinstance(reader, Union):
        j = best_branch(writer, reader)
        if j < 0:
            raise ResolutionError(f"the writer's {writer.describe()} matches no branch of the reader's union "
                                  f"{reader.describe()}", path)
        return ReaderBranchPlan(writer, reader, j, resolve(writer, reader.branches[j], path))
    if writer.type != reader.type:
        if reader.type not in _PROMOTIONS.get(writer.type, ()):
            raise ResolutionError(f"the writer's {writer.describe()} cannot be read as {reader.describe()}", path)
        _check_logical(writer, reader, path)
        return Read(writer, reader)
    if isinstance(writer, Record):
        return _record(writer, reader, path)
    if isinstance(writer, Enum):
        mapping = []
        for symbol in writer.symbols:
            if symbol in reader.symbols:
                mapping.append(reader.symbols.index(symbol))
            elif reader.default is not None:
                mapping.append(reader.symbols.index(reader.default))
            else:
                mapping.append(-1)
        return EnumPlan(writer, reader, mapping)
    if isinstance(writer, Fixed):
        if writer.size != reader.size:
            raise ResolutionError(f"the writer's {writer.describe()} cannot be read as {reader.describe()}: the "
                                  f"sizes differ", path)
        _check_logical(writer, reader, path)
        return Read(writer, reader)
    if isinstance(writer, Array):
        return ArrayPlan(writer, reader, resolve(writer.items, reader.items, f"{path}[]"))
    if isinstance(writer, Map):
        return MapPlan(writer, reader, resolve(writer.values, reader.values, f"{path}{{}}"))
    _check_logical(writer, reader, path)
    return Read(writer, reader)


def _record(writer: Record, reader: Record, path: str) -> RecordPlan:
    plan = RecordPlan(writer, reader)
    matched: dict[str, int] = {}
    for i, rf in enumerate(reader.fields):
        for name in (rf.name, *rf.aliases):
            wf = writer.field_named(name)
            if wf is not None and wf.name not in matched:
                matched[wf.name] = i
                break
    for wf in writer.fields:
        i = matched.get(wf.name, -1)
        if i < 0:
            plan.steps.append((wf, -1, Skip(wf.schema, None)))
        else:
            rf = reader.fields[i]
            plan.steps.append((wf, i, resolve(wf.schema, rf.schema, _join(path, rf.name))))
    taken = set(matched.values())
    for i, rf in enumerate(reader.fields):
        if i not in taken:
            if not rf.has_default:
                raise ResolutionError(f"the reader's field {rf.name!r} is not in the writer's record "
                                      f"{writer.fullname} and has no default", _join(path, rf.name))
            plan.missing.append(i)
    return plan


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def _check_logical(writer: Schema, reader: Schema, path: str) -> None:
    wl, rl = writer.logical, reader.logical
    if rl == "decimal":
        if wl != "decimal" or writer.scale != reader.scale:
            raise ResolutionError(f"the writer's {writer.describe()} cannot be read as {reader.describe()}: "
                                  f"Avro would reinterpret the unscaled value at another scale", path)
        return
    wu, ru = _UNITS.get(wl), _UNITS.get(rl)
    if wu and ru and wu != ru:
        raise ResolutionError(f"the writer's {writer.describe()} cannot be read as {reader.describe()}: Avro "
                              f"would reinterpret {wu} as {ru}", path)


def best_branch(writer: Schema, reader: Union) -> int:
    """The reader branch a writer value resolves to, as Java's Avro chooses it; -1 for none."""
    structural = -1
    for j, b in enumerate(reader.branches):
        if b.type != writer.type:
            continue
        if isinstance(writer, Named):
            if writer.fullname == b.fullname or writer.fullname in b.aliases:
                return j
            if isinstance(writer, Record) and (structural < 0 or writer.name == b.name) and _readable(writer, b):
                structural = j
        else:
            return j
    if structural >= 0:
        return structural
    for j, b in enumerate(reader.branches):
        if isinstance(writer, Primitive) and b.type in _PROMOTIONS.get(writer.type, ()):
            return j
    return -1


def _readable(writer: Schema, reader: Schema) -> bool:
    try:
        resolve(writer, reader)
    except ResolutionError:
        return False
    return True
