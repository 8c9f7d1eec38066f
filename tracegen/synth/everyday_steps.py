"""The pieces of an everyday program (`tracegen.synth.everyday`): records, the data, and steps.

`Ctx` is what one program has so far: the domain and the record's representation, its imports,
module constants and definitions, and the *products* earlier steps left in variables (a total, a
list of amounts, a lookup table...). A step reads the context, may add imports, constants and
definitions, and returns a `Step`: its lines, the variables it reads (the parameters it would have
as a helper function) and the ones it makes (what that helper would return). A step uses a product
when an earlier step made it and computes what it needs itself otherwise, so steps compose in any
order. Every step picks among several ways of writing the same thing.
"""
from __future__ import annotations

import copy
import random
from collections.abc import Callable
from dataclasses import dataclass, field

from tracegen.synth.everyday_domains import Domain
from tracegen.synth.multi import Names

REPRESENTATIONS: tuple[str, ...] = ("dict", "tuple", "namedtuple", "dataclass", "class")
_TYPE_NAMES = {"label": "str", "amount": "float", "count": "int", "group": "str"}


@dataclass
class Step:
    """A step's lines (at the indentation of the code around it), the context variables it reads, the
    variables it makes, and names for it as a helper function (empty: never moved into one)."""

    lines: list[str]
    uses: tuple[str, ...] = ()
    makes: tuple[str, ...] = ()
    helper_names: tuple[str, ...] = ()


@dataclass
class Ctx:
    """One program under construction (see the module docstring)."""

    rng: random.Random
    names: Names
    domain: Domain
    rep: str
    fields: tuple[str, ...]
    data: str = ""
    row: str = "row"
    method: str | None = None
    imports: set[str] = field(default_factory=set)
    consts: list[str] = field(default_factory=list)
    defs: list[str] = field(default_factory=list)
    tags: set[str] = field(default_factory=set)
    products: dict[str, str] = field(default_factory=dict)
    records: list[dict[str, object]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.names.taken.update(self.f(k) for k in self.fields)

    # ---- fields and records

    def f(self, kind: str) -> str:
        """The domain's name of a field kind (``amount`` -> ``price``)."""
        return getattr(self.domain, kind)

    def has(self, kind: str) -> bool:
        return kind in self.fields

    def get(self, var: str, kind: str) -> str:
        """The expression reading field `kind` of record `var`."""
        if self.rep == "dict":
            return f"{var}[{self.f(kind)!r}]"
        if self.rep == "tuple":
            return f"{var}[{self.fields.index(kind)}]"
        return f"{var}.{self.f(kind)}"

    def each(self, coll: str | None = None) -> tuple[str, Callable[[str], str]]:
        """A ``for`` header over records and a reader of a field of the current one (tuples are
        sometimes unpacked in the header)."""
        coll = coll or self.data
        if self.rep == "tuple" and self.rng.random() < 0.5:
            names = [self.f(k) for k in self.fields]
            self.tags.add("unpack")
            return f"for {', '.join(names)} in {coll}:", lambda kind: self.f(kind)
        return f"for {self.row} in {coll}:", lambda kind: self.get(self.row, kind)

    def value(self, var: str, read: Callable[[str], str] | None = None) -> str:
        """What one record is worth: its method (classes), amount times count, or its amount."""
        read = read or (lambda kind: self.get(var, kind))
        if self.method:
            return f"{var}.{self.method}()"
        if self.has("count"):
            return f"{read('amount')} * {read('count')}"
        return read("amount")

    def const(self, options: tuple[str, ...], value: object) -> str:
        """A module-level constant holding `value`; returns its name."""
        return self.const_text(options, repr(value))

    def const_text(self, options: tuple[str, ...], text: str) -> str:
        """A module-level constant written as `text` (an expression); returns its name."""
        name = self.names.get(*options)
        self.consts.append(f"{name} = {text}")
        self.tags.add("constant")
        return name

    def use(self, line: str, tag: str | None = None) -> None:
        self.imports.add(line)
        if tag:
            self.tags.add(tag)

    def var(self, *options: str) -> str:
        return self.names.get(*options)

    def some_label(self, present: bool | None = None) -> str:
        """A label value: one of the records' (``present``), one they lack, or either."""
        if present is None:
            present = self.rng.random() < 0.6
        have = [str(r["label"]) for r in self.records]
        if present and have:
            return self.rng.choice(have)
        absent = [w for w in self.domain.labels if w not in have]
        return self.rng.choice(absent or ["zzz"])

    # ---- trying a step

    def snapshot(self) -> dict[str, object]:
        return {"imports": set(self.imports), "consts": list(self.consts), "defs": list(self.defs), "tags": set(self.tags),
                "products": dict(self.products), "taken": set(self.names.taken), "method": self.method}

    def restore(self, snap: dict[str, object]) -> None:
        self.imports = copy.copy(snap["imports"])  # type: ignore[assignment]
        self.consts = copy.copy(snap["consts"])  # type: ignore[assignment]
        self.defs = copy.copy(snap["defs"])  # type: ignore[assignment]
        self.tags = copy.copy(snap["tags"])  # type: ignore[assignment]
        self.products = copy.copy(snap["products"])  # type: ignore[assignment]
        self.names.taken = copy.copy(snap["taken"])  # type: ignore[assignment]
        self.method = snap["method"]  # type: ignore[assignment]


# ------------------------------------------------------------------------------------------ records


def record_defs(ctx: Ctx) -> list[str]:
    """The record's definition for its representation (none for dicts and tuples)."""
    d, names = ctx.domain, [ctx.f(k) for k in ctx.fields]
    if ctx.rep == "namedtuple":
        ctx.use("from collections import namedtuple", "namedtuple")
        listed = repr(" ".join(names)) if ctx.rng.random() < 0.5 else repr(names)
        return [f"{d.record} = namedtuple({d.record!r}, {listed})"]
    if ctx.rep not in ("dataclass", "class"):
        return []
    method: list[str] = []
    if ctx.has("count") and ctx.rng.random() < 0.6:
        ctx.method = ctx.names.get("cost", "subtotal", "weighted", "line_total", "worth")
        method = ["", f"    def {ctx.method}(self):", f"        return self.{ctx.f('amount')} * self.{ctx.f('count')}"]
        ctx.tags.add("method")
    if ctx.rep == "dataclass":
        ctx.use("from dataclasses import dataclass", "dataclass")
        lines = ["@dataclass", f"class {d.record}:"] + [f"    {ctx.f(k)}: {_TYPE_NAMES[k]}" for k in ctx.fields]
        return ["\n".join(lines + method)]
    ctx.tags.add("class")
    lines = [f"class {d.record}:", f"    def __init__(self, {', '.join(names)}):"] + [f"        self.{n} = {n}" for n in names]
    return ["\n".join(lines + method)]


def _draw_records(ctx: Ctx) -> None:
    rng, d = ctx.rng, ctx.domain
    wide = ctx.rep in ("dict", "namedtuple", "dataclass") and len(ctx.fields) == 4  # keep a list's repr under 300 chars
    labels = rng.sample(d.labels, rng.randint(3, 4 if wide else 5))
    ctx.records = []
    for label in labels:
        rec: dict[str, object] = {"label": label, "amount": rng.choice(d.amounts)}
        if ctx.has("count"):
            rec["count"] = rng.randint(*d.counts)
        if ctx.has("group"):
            rec["group"] = rng.choice(d.groups)
        ctx.records.append(rec)


def _literal(ctx: Ctx, rec: dict[str, object]) -> str:
    values = [rec[k] for k in ctx.fields]
    if ctx.rep == "dict":
        return "{" + ", ".join(f"{ctx.f(k)!r}: {rec[k]!r}" for k in ctx.fields) + "}"
    if ctx.rep == "tuple":
        return "(" + ", ".join(repr(v) for v in values) + ")"
    if ctx.rng.random() < 0.2:
        return f"{ctx.domain.record}(" + ", ".join(f"{ctx.f(k)}={rec[k]!r}" for k in ctx.fields) + ")"
    return f"{ctx.domain.record}(" + ", ".join(repr(v) for v in values) + ")"


def _build(ctx: Ctx, parts: dict[str, str]) -> str:
    """A record made from expressions per field kind."""
    if ctx.rep == "dict":
        return "{" + ", ".join(f"{ctx.f(k)!r}: {parts[k]}" for k in ctx.fields) + "}"
    if ctx.rep == "tuple":
        return "(" + ", ".join(parts[k] for k in ctx.fields) + ")"
    return f"{ctx.domain.record}(" + ", ".join(parts[k] for k in ctx.fields) + ")"


def data_block(ctx: Ctx) -> list[str]:
    """The lines that make the collection of records (a literal, parsed text lines, or zipped lists)."""
    _draw_records(ctx)
    ctx.data = ctx.var(*ctx.domain.plurals)
    ctx.row = ctx.var(ctx.domain.record.lower(), "row", "entry", "rec")
    style = ctx.rng.random()
    if style < 0.5:
        return [f"{ctx.data} = ["] + [f"    {_literal(ctx, r)}," for r in ctx.records] + ["]"]
    if style < 0.75:
        return _parsed(ctx)
    return _zipped(ctx)


def _parsed(ctx: Ctx) -> list[str]:
    rng = ctx.rng
    texts = []
    for rec in ctx.records:
        texts.append(",".join(str(rec[k]) for k in ctx.fields))
    bad_at = rng.randrange(len(texts) + 1)
    bad = dict(ctx.records[0])
    broken = rng.choice([k for k in ("amount", "count") if ctx.has(k)])
    bad[broken] = rng.choice(["n/a", "", "?", "1,5"] if broken == "amount" else ["x", "2.5", "many"])
    bad_text = ",".join(str(bad[k]) for k in ctx.fields)
    if rng.random() < 0.3:
        bad_text = ",".join(str(bad[k]) for k in ctx.fields[:-1])  # a field missing: unpacking fails
    texts.insert(bad_at, bad_text)
    lines_var = ctx.var("lines", "raw", "rows_text", "records")
    sep = rng.choice([",", ";", "|"])
    texts = [t.replace(",", sep) if sep != "," else t for t in texts]
    if sep != "," and "1,5" in " ".join(texts):
        texts = [t.replace("1,5", "1.5.0") for t in texts]
    out = [f"{lines_var} = {texts!r}"] if len(repr(texts)) < 90 else [f"{lines_var} = ["] + [f"    {t!r}," for t in texts] + ["]"]
    line = ctx.var("line", "text")
    convert = {"label": "{}", "amount": "float({})", "count": "int({})", "group": "{}"}
    skipped = ctx.var("skipped", "bad", "errors") if rng.random() < 0.5 else None
    if skipped:
        out.append(f"{skipped} = 0")
    out += [f"{ctx.data} = []", f"for {line} in {lines_var}:", "    try:"]
    if rng.random() < 0.5:
        names = [ctx.f(k) for k in ctx.fields]
        out.append(f"        {', '.join(names)} = {line}.split({sep!r})")
        parts = {k: convert[k].format(ctx.f(k)) for k in ctx.fields}
        parts["label"] = ctx.f("label") + ".strip()"
        ctx.tags.add("unpack")
    else:
        fields_var = ctx.var("fields", "parts", "cols")
        out.append(f"        {fields_var} = {line}.split({sep!r})")
        parts = {k: convert[k].format(f"{fields_var}[{i}]") for i, k in enumerate(ctx.fields)}
    out.append(f"        {ctx.row} = {_build(ctx, parts)}")
    handler = rng.random()
    out.append("    except ValueError:" if handler < 0.7 else "    except (ValueError, IndexError):")
    if skipped:
        out += [f"        {skipped} += 1", "        continue"]
    else:
        out.append("        continue")
    out.append(f"    {ctx.data}.append({ctx.row})")
    ctx.tags.update({"parse", "try", "str_methods"})
    return out


def _zipped(ctx: Ctx) -> list[str]:
    out = []
    columns = {}
    for k in ctx.fields:
        name = ctx.var(*_COLUMN_NAMES[k](ctx))
        columns[k] = name
        out.append(f"{name} = {[r[k] for r in ctx.records]!r}")
    cols = [columns[k] for k in ctx.fields]
    short = [ctx.var(ctx.f(k)[0], ctx.f(k)[:2]) for k in ctx.fields]
    parts = dict(zip(ctx.fields, short))
    if ctx.rng.random() < 0.5:
        out.append(f"{ctx.data} = [{_build(ctx, parts)} for {', '.join(short)} in zip({', '.join(cols)})]")
        ctx.tags.add("comprehension")
    else:
        out += [f"{ctx.data} = []", f"for {', '.join(short)} in zip({', '.join(cols)}):", f"    {ctx.data}.append({_build(ctx, parts)})"]
    ctx.products["labels"] = columns["label"]
    ctx.products["amounts"] = columns["amount"]
    ctx.tags.update({"zip", "unpack"})
    return out


_COLUMN_NAMES: dict[str, Callable[[Ctx], tuple[str, ...]]] = {
    "label": lambda c: (c.f("label") + "s", "names", "labels"),
    "amount": lambda c: (c.f("amount") + "s", "values", "amounts"),
    "count": lambda c: (c.f("count") + "s", "counts", "sizes"),
    "group": lambda c: (c.f("group") + "s", "groups_col", "kinds"),
}


# ------------------------------------------------------------------------------------------ steps


def _amounts(ctx: Ctx) -> tuple[list[str], str]:
    """The list of amounts: the existing product, or the lines that make it."""
    if "amounts" in ctx.products:
        return [], ctx.products["amounts"]
    name = ctx.var(ctx.f("amount") + "s", "values", "amounts")
    ctx.products["amounts"] = name
    ctx.tags.add("comprehension")
    return [f"{name} = [{ctx.get(ctx.row, 'amount')} for {ctx.row} in {ctx.data}]"], name


def _labels(ctx: Ctx) -> tuple[list[str], str]:
    if "labels" in ctx.products:
        return [], ctx.products["labels"]
    name = ctx.var(ctx.f("label") + "s", "names", "labels")
    ctx.products["labels"] = name
    ctx.tags.add("comprehension")
    return [f"{name} = [{ctx.get(ctx.row, 'label')} for {ctx.row} in {ctx.data}]"], name


def _uses(ctx: Ctx, *names: str) -> tuple[str, ...]:
    return tuple(dict.fromkeys([ctx.data, *names]))


def step_total(ctx: Ctx) -> Step | None:
    if "total" in ctx.products:
        return None
    rng = ctx.rng
    total = ctx.var("total", "subtotal", "grand_total", "due", "running")
    style = rng.random()
    if style < 0.4:
        header, read = ctx.each()
        row_value = ctx.value(ctx.row, read)
        lines = [f"{total} = {rng.choice(['0', '0.0'])}", header, f"    {total} += {row_value}"]
    elif style < 0.65:
        lines = [f"{total} = sum({ctx.value(ctx.row)} for {ctx.row} in {ctx.data})"]
        ctx.tags.add("comprehension")
    elif style < 0.85 and not ctx.method:
        helper = ctx.var("line_cost", "row_value", "amount_of", "weight_of")
        ctx.defs.append(f"def {helper}({ctx.row}):\n    return {ctx.value(ctx.row)}")
        lines = [f"{total} = sum({helper}({ctx.row}) for {ctx.row} in {ctx.data})"]
        ctx.tags.update({"helpers", "comprehension"})
    else:
        ctx.use("import math", "math")
        lines = [f"{total} = math.fsum({ctx.value(ctx.row)} for {ctx.row} in {ctx.data})"]
    if rng.random() < 0.3:
        lines.append(f"{total} = round({total}, {rng.choice([1, 2, 2, 3])})")
    ctx.products["total"] = total
    ctx.tags.add("float")
    return Step(lines, _uses(ctx), (total,), ("compute_total", "total_of", "sum_up"))


def step_mean(ctx: Ctx) -> Step | None:
    if "mean" in ctx.products:
        return None
    mean = ctx.var("mean", "average", "avg")
    if "total" in ctx.products and ctx.rng.random() < 0.6:
        total = ctx.products["total"]
        lines = [f"{mean} = {total} / len({ctx.data})"]
        uses = _uses(ctx, total)
    else:
        pre, amounts = _amounts(ctx)
        lines = pre + [f"{mean} = sum({amounts}) / len({amounts})"]
        uses = (amounts,) if not pre else _uses(ctx)
    ctx.products["mean"] = mean
    ctx.tags.add("float")
    return Step(lines, uses, (mean,), ("average_of", "mean_value"))


def step_extremes(ctx: Ctx) -> Step | None:
    rng = ctx.rng
    style = rng.random()
    amount = ctx.get(ctx.row, "amount")
    if style < 0.3 and "low" not in ctx.products:
        pre, amounts = _amounts(ctx)
        low, high = ctx.var("low", "lo", "smallest"), ctx.var("high", "hi", "largest")
        lines = pre + [f"{low}, {high} = min({amounts}), max({amounts})"]
        if rng.random() < 0.5:
            spread = ctx.var("spread", "gap", "width")
            lines.append(f"{spread} = {high} - {low}")
            makes: tuple[str, ...] = (low, high, spread)
        else:
            makes = (low, high)
        ctx.products.update(low=low, high=high)
        ctx.tags.update({"min_max", "unpack", "tuple"})
        return Step(lines, (amounts,) if not pre else _uses(ctx), makes, ("value_range", "bounds"))
    if "best" in ctx.products:
        return None
    best = ctx.var("best", "top", "cheapest", "winner", "pick")
    if style < 0.55:
        fn = rng.choice(["min", "max"])
        lines = [f"{best} = {fn}({ctx.data}, key=lambda {ctx.row}: {amount})"]
        ctx.tags.update({"min_max", "lambda"})
    elif style < 0.85:
        cmp = rng.choice([">", "<"])
        lines = [f"{best} = None", f"for {ctx.row} in {ctx.data}:",
                 f"    if {best} is None or {amount} {cmp} {ctx.get(best, 'amount')}:", f"        {best} = {ctx.row}"]
        ctx.tags.add("none")
    else:
        ctx.use("import math", "math")
        lowest = ctx.var("lowest", "floor_value", "minimum")
        start = rng.choice(["math.inf", "float('inf')"])
        lines = [f"{lowest} = {start}", f"{best} = None", f"for {ctx.row} in {ctx.data}:",
                 f"    if {amount} < {lowest}:", f"        {lowest} = {amount}", f"        {best} = {ctx.row}"]
        ctx.tags.update({"none", "inf"})
    if rng.random() < 0.5:
        label = ctx.var("best_" + ctx.f("label"), "winner_name", "chosen")
        lines.append(f"{label} = {ctx.get(best, 'label')}")
    ctx.products["best"] = best
    return Step(lines, _uses(ctx), (best,), ("find_best", "pick_one"))


def step_ranking(ctx: Ctx) -> Step | None:
    if "ranked" in ctx.products:
        return None
    rng = ctx.rng
    ranked = ctx.var("ranked", "ordered", "by_" + ctx.f("amount"), "sorted_rows")
    amount = ctx.get(ctx.row, "amount")
    if ctx.has("group") and rng.random() < 0.35:
        key = f"({ctx.get(ctx.row, 'group')}, -{amount})"
        ctx.tags.add("tuple")
    else:
        key = amount
    reverse = ", reverse=True" if rng.random() < 0.5 else ""
    lines = [f"{ranked} = sorted({ctx.data}, key=lambda {ctx.row}: {key}{reverse})"]
    after = rng.random()
    if after < 0.4:
        top = ctx.var("top", "leaders", "first_two")
        lines.append(f"{top} = [{ctx.get(ctx.row, 'label')} for {ctx.row} in {ranked}[:{rng.randint(2, 3)}]]")
        ctx.tags.add("comprehension")
    elif after < 0.7:
        first, rest = ctx.var("first", "head"), ctx.var("rest", "others", "tail")
        lines.append(f"{first}, *{rest} = {ranked}")
        ctx.tags.update({"unpack", "star_unpack"})
    ctx.products["ranked"] = ranked
    ctx.tags.add("sorted_key")
    return Step(lines, _uses(ctx), (ranked,), ("rank", "sort_rows", "order_by_value"))


def step_grouping(ctx: Ctx) -> Step | None:
    if not ctx.has("group") or "groups" in ctx.products:
        return None
    rng = ctx.rng
    groups = ctx.var("by_" + ctx.f("group"), "groups", "buckets", "grouped")
    key = ctx.get(ctx.row, "group")
    style = rng.random()
    loop = f"for {ctx.row} in {ctx.data}:"
    if style < 0.3:
        ctx.use("from collections import defaultdict", "defaultdict")
        lines = [f"{groups} = defaultdict(list)", loop, f"    {groups}[{key}].append({ctx.get(ctx.row, 'label')})"]
        ctx.tags.add("nested")
    elif style < 0.5:
        ctx.use("from collections import defaultdict", "defaultdict")
        lines = [f"{groups} = defaultdict(float)", loop, f"    {groups}[{key}] += {ctx.get(ctx.row, 'amount')}"]
        ctx.tags.add("float")
    elif style < 0.75:
        lines = [f"{groups} = {{}}", loop, f"    {groups}.setdefault({key}, []).append({ctx.get(ctx.row, 'amount')})"]
        ctx.tags.add("nested")
    else:
        lines = [f"{groups} = {{}}", loop, f"    if {key} not in {groups}:", f"        {groups}[{key}] = []",
                 f"    {groups}[{key}].append(({ctx.get(ctx.row, 'label')}, {ctx.get(ctx.row, 'amount')}))"]
        ctx.tags.update({"nested", "tuple"})
    if rng.random() < 0.3:
        plain = ctx.var("summary", "as_dict", "group_map")
        lines.append(f"{plain} = dict({groups})" if "defaultdict" in lines[0] else f"{plain} = {{k: len(v) for k, v in {groups}.items()}}")
        ctx.tags.add("comprehension")
    ctx.products["groups"] = groups
    return Step(lines, _uses(ctx), (groups,), ("group_rows", "bucket", "split_by_" + ctx.f("group")))


def step_counting(ctx: Ctx) -> Step | None:
    if "counts" in ctx.products:
        return None
    rng = ctx.rng
    ctx.use("from collections import Counter", "counter")
    counts = ctx.var("counts", "tally", "freq")
    if ctx.has("group") and rng.random() < 0.5:
        key = ctx.get(ctx.row, "group")
    else:
        key = f"{ctx.get(ctx.row, 'label')}[0]"
    if ctx.has("count") and rng.random() < 0.4:
        lines = [f"{counts} = Counter()", f"for {ctx.row} in {ctx.data}:", f"    {counts}[{key}] += {ctx.get(ctx.row, 'count')}"]
    else:
        lines = [f"{counts} = Counter({key} for {ctx.row} in {ctx.data})"]
    style = rng.random()
    if style < 0.5:
        common, n = ctx.var("common", "most", "top_key"), ctx.var("n", "times", "hits")
        lines.append(f"{common}, {n} = {counts}.most_common(1)[0]")
        ctx.tags.update({"unpack", "tuple"})
    elif style < 0.75:
        pairs = ctx.var("pairs", "common_pairs", "ranking")
        lines.append(f"{pairs} = {counts}.most_common(2)")
        ctx.tags.add("tuple")
    ctx.products["counts"] = counts
    return Step(lines, _uses(ctx), (counts,), ("tally_up", "count_keys"))


def step_sets(ctx: Ctx) -> Step | None:
    if "seen" in ctx.products:
        return None
    rng = ctx.rng
    kind = "group" if ctx.has("group") and rng.random() < 0.6 else "label"
    pool = ctx.domain.groups if kind == "group" else ctx.domain.labels
    seen = ctx.var("seen", "present", "kinds", "distinct")
    style = rng.random()
    if style < 0.6:
        lines = [f"{seen} = {{{ctx.get(ctx.row, kind)} for {ctx.row} in {ctx.data}}}"]
        ctx.tags.add("comprehension")
    else:
        lines = [f"{seen} = set()", f"for {ctx.row} in {ctx.data}:", f"    {seen}.add({ctx.get(ctx.row, kind)})"]
    wanted_values = set(rng.sample(pool, min(len(pool), rng.randint(2, 3))))
    wanted_literal = "{" + ", ".join(repr(v) for v in sorted(wanted_values)) + "}"
    if rng.random() < 0.5:
        text = wanted_literal if rng.random() < 0.7 else f"frozenset({wanted_literal})"
        wanted = ctx.const_text(("WANTED", "EXPECTED", "REQUIRED"), text)
    else:
        wanted = ctx.var("wanted", "expected", "needed")
        lines.insert(0, f"{wanted} = {wanted_literal}")
    op = rng.random()
    result = ctx.var("missing", "extra", "shared", "both", "either")
    if op < 0.4:
        lines.append(f"{result} = {wanted} - {seen}")
    elif op < 0.7:
        lines.append(f"{result} = {seen} & {wanted}")
    else:
        lines.append(f"{result} = sorted({seen} | {wanted})")
    if rng.random() < 0.4:
        flag = ctx.var("complete", "all_there", "covered")
        lines.append(f"{flag} = {wanted} <= {seen}" if rng.random() < 0.5 else f"{flag} = len({result}) == 0")
        ctx.tags.add("bool")
    ctx.products["seen"] = seen
    ctx.tags.add("set")
    return Step(lines, _uses(ctx), (seen, result), ("compare_sets", "check_coverage"))


def step_report(ctx: Ctx) -> Step | None:
    if "report" in ctx.products:
        return None
    rng = ctx.rng
    report = ctx.var("lines_out", "report", "rows_out", "printed")
    start = rng.choice(["", ", start=1", ", 1"])
    i = ctx.var("i", "n", "pos", "idx")
    label, amount = ctx.get(ctx.row, "label"), ctx.get(ctx.row, "amount")
    style = rng.random()
    if style < 0.45:
        width = rng.choice(["", ":>8", ":<10"])
        fmt = rng.choice([".2f", ".1f", "", ".3g", ",.2f"])
        text = f'f"{{{i}}}. {{{label}{width}}} {{{amount}:{fmt}}}"' if fmt else f'f"{{{i}}}. {{{label}{width}}} {{{amount}}}"'
        ctx.tags.add("fstring")
    elif style < 0.75:
        text = repr("{}: {} -> {:.2f}" if rng.random() < 0.5 else "{0:>2} {1:<8}{2:8.3f}") + f".format({i}, {label}, {amount})"
        ctx.tags.add("format")
    else:
        text = f"'%d %s %.2f' % ({i}, {label}, {amount})"
        ctx.tags.add("format")
    lines = [f"{report} = []", f"for {i}, {ctx.row} in enumerate({ctx.data}{start}):", f"    {report}.append({text})"]
    if "total" in ctx.products and rng.random() < 0.6:
        total = ctx.products["total"]
        footer = ctx.var("footer", "summary_line", "last_line")
        form = rng.choice([f'f"Total: {{{total}:.2f}}"', f"'Total: {{:.2f}}'.format({total})", f'f"{{{total}=}}"'])
        lines.append(f"{footer} = {form}")
        uses = _uses(ctx, total)
    else:
        uses = _uses(ctx)
    if rng.random() < 0.5:
        lines.append(f"print({report}[-1])" if rng.random() < 0.5 else f"print('\\n'.join({report}))")
        ctx.tags.add("print")
    ctx.products["report"] = report
    ctx.tags.add("enumerate")
    return Step(lines, uses, (report,), ("format_rows", "make_report", "render"))


def step_zip(ctx: Ctx) -> Step | None:
    if "table" in ctx.products:
        return None
    rng = ctx.rng
    pre_l, labels = _labels(ctx)
    pre_a, amounts = _amounts(ctx)
    lines = pre_l + pre_a
    style = rng.random()
    table = ctx.var("table", "lookup", "price_of", "index")
    if style < 0.5:
        lines.append(f"{table} = dict(zip({labels}, {amounts}))")
        ctx.products["table"] = table
        makes: tuple[str, ...] = (table,)
    elif style < 0.8:
        pairs = ctx.var("pairs", "zipped", "couples")
        lines.append(f"{pairs} = list(zip({labels}, {amounts}))")
        first = ctx.var("first_pair", "head_pair")
        lines.append(f"{first} = {pairs}[0]")
        ctx.tags.add("tuple")
        makes = (pairs,)
    else:
        pairs = ctx.var("scaled", "doubled", "marked")
        k, v = ctx.var("key", "k", "word"), ctx.var("val", "v", "num")
        lines += [f"{pairs} = []", f"for {k}, {v} in zip({labels}, {amounts}):"]
        lines.append(f"    {pairs}.append(({k}.upper(), {v} * {rng.choice([2, 10, 0.5, 1.5])}))")
        ctx.tags.update({"tuple", "str_methods", "unpack"})
        makes = (pairs,)
    ctx.tags.add("zip")
    uses = _uses(ctx) if pre_l or pre_a else (labels, amounts)
    return Step(lines, uses, makes, ("pair_up", "zip_columns"))


def step_lookup(ctx: Ctx) -> Step | None:
    rng = ctx.rng
    lines: list[str] = []
    if "table" in ctx.products:
        table = ctx.products["table"]
        uses: tuple[str, ...] = (table,)
    else:
        table = ctx.var("table", "lookup", "by_name", "index")
        lines.append(f"{table} = {{{ctx.get(ctx.row, 'label')}: {ctx.get(ctx.row, 'amount')} for {ctx.row} in {ctx.data}}}")
        ctx.products["table"] = table
        ctx.tags.add("comprehension")
        uses = _uses(ctx)
    key = ctx.some_label()
    found = ctx.var("found", "hit", "price_found", "wanted_value")
    style = rng.random()
    if style < 0.4:
        lines.append(f"{found} = {table}.get({key!r})")
        fallback = rng.choice(["0.0", "-1", "float('nan')"])
        lines += [f"if {found} is None:", f"    {found} = {fallback}"]
        ctx.tags.add("none")
    else:
        tries = ctx.var("lookups", "attempts", "tries")
        lines += [f"{tries} = 0", "try:", f"    {found} = {table}[{key!r}]", "except KeyError:", f"    {found} = None"]
        ctx.tags.add("none")
        if rng.random() < 0.6:
            lines += ["finally:", f"    {tries} += 1"]
            ctx.tags.add("finally")
        ctx.tags.add("try")
    return Step(lines, uses, (found,), ("look_up", "find_value"))


def step_guarded_division(ctx: Ctx) -> Step | None:
    rng = ctx.rng
    amount = ctx.get(ctx.row, "amount")
    limit_value = rng.choice(ctx.domain.amounts)
    limit = ctx.const(("LIMIT", "THRESHOLD", "CUTOFF", "MAX_" + ctx.f("amount").upper()), limit_value)
    chosen = ctx.var("chosen", "above", "selected", "big")
    cmp = rng.choice([">", ">=", "<"])
    ratio = ctx.var("ratio", "share", "mean_selected", "fraction")
    lines = [f"{chosen} = [{amount} for {ctx.row} in {ctx.data} if {amount} {cmp} {limit}]", "try:"]
    if rng.random() < 0.5:
        lines.append(f"    {ratio} = sum({chosen}) / len({chosen})")
    else:
        lines.append(f"    {ratio} = len({ctx.data}) / len({chosen})")
    fallback = rng.choice(["None", "0.0", "float('nan')"])
    lines += ["except ZeroDivisionError:", f"    {ratio} = {fallback}"]
    ctx.tags.update({"try", "comprehension", "constant", "float"})
    if fallback == "None":
        ctx.tags.add("none")
    return Step(lines, _uses(ctx), (chosen, ratio), ("selected_mean", "share_of"))


def step_math(ctx: Ctx) -> Step | None:
    rng = ctx.rng
    ctx.use("import math", "math")
    style = rng.random()
    if style < 0.3:
        pre, amounts = _amounts(ctx)
        mean = ctx.products.get("mean")
        lines = list(pre)
        if mean is None:
            mean = ctx.var("mean", "average", "avg")
            lines.append(f"{mean} = sum({amounts}) / len({amounts})")
            ctx.products["mean"] = mean
            uses = _uses(ctx) if pre else (amounts,)
        else:
            uses = _uses(ctx, mean) if pre else (amounts, mean)
        std = ctx.var("std", "stdev", "deviation", "sigma")
        x = ctx.var("x", "a", "v")
        lines.append(f"{std} = math.sqrt(sum(({x} - {mean}) ** 2 for {x} in {amounts}) / len({amounts}))")
        return Step(lines, uses, (std,), ("std_dev", "spread_of"))
    if style < 0.55:
        pre, amounts = _amounts(ctx)
        out = ctx.var("rounded", "whole", "floors", "ceilings")
        fn = rng.choice(["math.floor", "math.ceil", "round", "math.trunc"])
        x = ctx.var("x", "a", "v")
        lines = pre + [f"{out} = [{fn}({x}) for {x} in {amounts}]"]
        ctx.tags.add("comprehension")
        return Step(lines, _uses(ctx) if pre else (amounts,), (out,), ("round_all", "whole_units"))
    if style < 0.8:
        total = ctx.products.get("total")
        lines = []
        if total is None:
            total = ctx.var("total", "subtotal", "due")
            lines.append(f"{total} = sum({ctx.get(ctx.row, 'amount')} for {ctx.row} in {ctx.data})")
            ctx.products["total"] = total
        expected = rng.choice([sum(float(r["amount"]) for r in ctx.records), round(sum(float(r["amount"]) for r in ctx.records), 1), 1.0])
        tol = ctx.const(("TOLERANCE", "EPS", "EPSILON"), rng.choice([1e-05, 1e-09, 0.001, 0.01]))
        ok = ctx.var("ok", "matches", "close_enough", "balanced")
        lines.append(f"{ok} = math.isclose({total}, {expected!r}, rel_tol={tol})")
        same = ctx.var("exact", "equal", "identical")
        lines.append(f"{same} = {total} == {expected!r}")
        ctx.tags.update({"bool", "float"})
        return Step(lines, _uses(ctx) if len(lines) > 2 else (total,), (ok, same), ("check_total", "verify_sum"))
    a, b = ctx.var("dx", "width", "a"), ctx.var("dy", "height", "b")
    va, vb = rng.choice(ctx.domain.amounts), rng.choice(ctx.domain.amounts)
    dist = ctx.var("dist", "diagonal", "length")
    lines = [f"{a}, {b} = {va!r}, {vb!r}", f"{dist} = math.hypot({a}, {b})"]
    if rng.random() < 0.5:
        angle = ctx.var("angle", "theta", "degrees")
        lines.append(f"{angle} = math.degrees(math.atan2({b}, {a}))")
    ctx.tags.update({"unpack", "tuple"})
    return Step(lines, (), (dist,), ())


def step_deque(ctx: Ctx) -> Step | None:
    if "window" in ctx.products:
        return None
    rng = ctx.rng
    ctx.use("from collections import deque", "deque")
    if rng.random() < 0.5:
        pre, amounts = _amounts(ctx)
        window = ctx.var("window", "recent", "last_few")
        moving = ctx.var("moving", "smoothed", "rolling")
        x = ctx.var("x", "a", "v")
        size = rng.randint(2, 3)
        lines = pre + [f"{window} = deque(maxlen={size})", f"{moving} = []", f"for {x} in {amounts}:",
                       f"    {window}.append({x})", f"    {moving}.append(sum({window}) / len({window}))"]
        ctx.products["window"] = window
        ctx.tags.add("float")
        return Step(lines, _uses(ctx) if pre else (amounts,), (moving,), ("rolling_mean", "smooth"))
    queue = ctx.var("queue", "pending", "todo_queue")
    done = ctx.var("done", "handled", "served")
    item = ctx.var("current", "nxt", "head")
    pop = rng.choice(["popleft", "pop"])
    lines = [f"{queue} = deque({ctx.data})", f"{done} = []", f"while {queue}:", f"    {item} = {queue}.{pop}()",
             f"    {done}.append({ctx.get(item, 'label')})"]
    if rng.random() < 0.5:
        lines.insert(2, f"{queue}.rotate(1)")
    ctx.products["window"] = queue
    return Step(lines, _uses(ctx), (done,), ("drain", "process_queue"))


def step_mutate(ctx: Ctx) -> Step | None:
    rng = ctx.rng
    if "mutated" in ctx.products:
        return None
    rate = ctx.const(("RATE", "DISCOUNT", "FACTOR", "MARKUP"), rng.choice([0.1, 0.15, 0.2, 0.05, 1.08, 0.9]))
    amount_name = ctx.f("amount")
    if ctx.rep in ("dict", "class", "dataclass"):
        target = f"{ctx.row}[{amount_name!r}]" if ctx.rep == "dict" else f"{ctx.row}.{amount_name}"
        formula = rng.choice([f"{target} * (1 - {rate})", f"{target} * {rate}", f"{target} + {rate}"])
        if rng.random() < 0.4:
            formula = f"round({formula}, 2)"
        lines = [f"for {ctx.row} in {ctx.data}:", f"    {target} = {formula}"]
        if ctx.has("count") and rng.random() < 0.4:
            lines.insert(1, f"    if {ctx.get(ctx.row, 'count')} > {rng.randint(1, 3)}:")
            lines[2] = "    " + lines[2]
        ctx.tags.add("attribute_set" if ctx.rep != "dict" else "nested")
    elif ctx.rep == "namedtuple":
        lines = [f"{ctx.data} = [{ctx.row}._replace({amount_name}={ctx.row}.{amount_name} * {rate}) for {ctx.row} in {ctx.data}]"]
        ctx.tags.add("comprehension")
    else:
        names = [ctx.f(k) for k in ctx.fields]
        built = ", ".join(f"{n} * {rate}" if k == "amount" else n for k, n in zip(ctx.fields, names))
        lines = [f"{ctx.data} = [({built}) for {', '.join(names)} in {ctx.data}]"]
        ctx.tags.update({"comprehension", "unpack"})
    ctx.products["mutated"] = ctx.data
    ctx.tags.update({"float", "constant"})
    return Step(lines, _uses(ctx), (ctx.data,), ("apply_rate", "adjust"))


def step_container(ctx: Ctx) -> Step | None:
    if "box" in ctx.products:
        return None
    rng = ctx.rng
    d = ctx.domain
    cls = d.owner
    entries = ctx.var("entries", "rows", "contents")
    owner_value = rng.choice(["ann", "main", "north", "team a", "q1"])
    value = ctx.value("e")
    total_method = rng.choice(["total", "worth", "amount_due", "size"])
    defs = [f"class {cls}:", "    def __init__(self, owner):", "        self.owner = owner", f"        self.{entries} = []",
            "        self.last = None", "", f"    def {d.verb}(self, entry):", f"        self.{entries}.append(entry)",
            "        self.last = entry", f"        return len(self.{entries})", "", f"    def {total_method}(self):",
            f"        return sum({value} for e in self.{entries})"]
    ctx.defs.append("\n".join(defs))
    box = ctx.var(cls.lower(), "holder", "box")
    size = ctx.var("size", "n_entries", "count_now")
    lines = [f"{box} = {cls}({owner_value!r})", f"for {ctx.row} in {ctx.data}:"]
    if rng.random() < 0.4:
        lines += [f"    if {ctx.get(ctx.row, 'amount')} > {rng.choice(d.amounts)!r}:", f"        {size} = {box}.{d.verb}({ctx.row})"]
        lines.insert(1, f"{size} = 0")
    else:
        lines.append(f"    {size} = {box}.{d.verb}({ctx.row})")
    result = ctx.var("held", "box_total", "owed")
    lines.append(f"{result} = {box}.{total_method}()")
    ctx.products["box"] = box
    ctx.tags.update({"class", "method", "object"})
    return Step(lines, _uses(ctx), (box, result), ())


def step_budget(ctx: Ctx) -> Step | None:
    rng = ctx.rng
    budget_value = rng.choice([1.0, 2.5, 5.0, 10.0, 20.0, 0.5, 100.0])
    budget = ctx.var("budget", "left", "remaining", "capacity")
    taken = ctx.var("taken", "bought", "kept", "chosen_rows")
    amount = ctx.get(ctx.row, "amount")
    source = ctx.products.get("ranked", ctx.data)
    lines = [f"{budget} = {budget_value!r}", f"{taken} = []", f"for {ctx.row} in {source}:"]
    if rng.random() < 0.5:
        lines += [f"    if {amount} > {budget}:", "        break"]
    else:
        lines += [f"    if {amount} > {budget}:", "        continue"]
    lines += [f"    {budget} -= {amount}", f"    {taken}.append({ctx.get(ctx.row, 'label')})"]
    ctx.tags.update({"float", "loop_control"})
    return Step(lines, tuple(dict.fromkeys([source, ctx.data])) if source != ctx.data else _uses(ctx), (budget, taken),
                ("spend", "fill_up", "take_while_fits"))


def step_summary(ctx: Ctx) -> Step | None:
    if "summary" in ctx.products:
        return None
    rng = ctx.rng
    known = {k: v for k, v in ctx.products.items() if k in ("total", "mean", "low", "high", "best", "counts", "seen")}
    items = [("n", f"len({ctx.data})")]
    if "total" in known:
        items.append(("total", known["total"]))
    if "mean" in known:
        items.append(("mean", known["mean"]))
    if "low" in known:
        items.append(("range", f"({known['low']}, {known['high']})"))
        ctx.tags.update({"tuple", "nested"})
    if "best" in known and rng.random() < 0.5:
        items.append(("best", ctx.get(known["best"], "label")))
    if len(items) < 2:
        return None
    summary = ctx.var("summary", "stats", "info", "result")
    style = rng.random()
    if style < 0.5:
        lines = [f"{summary} = {{" + ", ".join(f"{k!r}: {v}" for k, v in items) + "}"]
        ctx.tags.add("nested")
    elif style < 0.75:
        ctx.use("from collections import namedtuple", "namedtuple")
        type_name = ctx.var("Stats", "Summary", "Report")
        ctx.defs.append(f"{type_name} = namedtuple({type_name!r}, {[k for k, _ in items]!r})")
        lines = [f"{summary} = {type_name}(" + ", ".join(v for _, v in items) + ")"]
    else:
        lines = [f"{summary} = (" + ", ".join(v for _, v in items) + ")"]
        ctx.tags.add("tuple")
    uses = tuple(dict.fromkeys([ctx.data, *(v for v in known.values())]))
    ctx.products["summary"] = summary
    return Step(lines, uses, (summary,), ())


def step_validate(ctx: Ctx) -> Step | None:
    if "errors" in ctx.products:
        return None
    rng = ctx.rng
    check = ctx.var("check", "validate", "ensure_valid")
    cond_amount = rng.choice(ctx.domain.amounts)
    amount = ctx.get(ctx.row, "amount")
    exc = rng.choice(["ValueError", "ValueError", "RuntimeError"])
    ctx.defs.append("\n".join([f"def {check}({ctx.row}):", f"    if {amount} > {cond_amount!r}:",
                               f"        raise {exc}(f\"too big: {{{amount}}}\")", f"    return {amount}"]))
    errors = ctx.var("errors", "problems", "rejected")
    good = ctx.var("good", "valid", "accepted")
    err = ctx.var("err", "exc", "e")
    lines = [f"{errors} = []", f"{good} = []", f"for {ctx.row} in {ctx.data}:", "    try:",
             f"        {good}.append({check}({ctx.row}))", f"    except {exc} as {err}:", f"        {errors}.append(str({err}))"]
    ctx.products["errors"] = errors
    ctx.tags.update({"try", "raise", "helpers"})
    return Step(lines, _uses(ctx), (good, errors), ("split_valid", "screen"))


def step_strings(ctx: Ctx) -> Step | None:
    rng = ctx.rng
    pre, labels = _labels(ctx)
    out = ctx.var("joined", "names_line", "caption", "tags_line")
    style = rng.random()
    if style < 0.4:
        lines = pre + [f"{out} = {rng.choice([', ', ' / ', '-'])!r}.join(sorted({labels}))"]
    elif style < 0.7:
        w = ctx.var("w", "word", "s")
        lines = pre + [f"{out} = ''.join({w}[0].upper() for {w} in {labels})"]
        ctx.tags.add("comprehension")
    else:
        w = ctx.var("w", "word", "s")
        lines = pre + [f"{out} = [{w}.title() for {w} in {labels} if len({w}) > {rng.randint(2, 4)}]"]
        ctx.tags.add("comprehension")
    ctx.tags.add("str_methods")
    return Step(lines, _uses(ctx) if pre else (labels,), (out,), ("label_text", "join_names"))


def step_flags(ctx: Ctx) -> Step | None:
    rng = ctx.rng
    amount = ctx.get(ctx.row, "amount")
    bound = rng.choice(ctx.domain.amounts)
    fn = rng.choice(["any", "all"])
    flag = ctx.var("any_big" if fn == "any" else "all_small", "flag", "check_ok")
    cmp = ">" if fn == "any" else "<"
    lines = [f"{flag} = {fn}({amount} {cmp} {bound!r} for {ctx.row} in {ctx.data})"]
    if ctx.has("count") and rng.random() < 0.5:
        empty = ctx.var("has_zero", "out_of_stock", "empty")
        lines.append(f"{empty} = [{ctx.get(ctx.row, 'label')} for {ctx.row} in {ctx.data} if {ctx.get(ctx.row, 'count')} == 0]")
        ctx.tags.add("comprehension")
    ctx.tags.add("bool")
    return Step(lines, _uses(ctx), (flag,), ())


STEPS: tuple[tuple[Callable[[Ctx], Step | None], float], ...] = (
    (step_total, 2.0),
    (step_mean, 1.0),
    (step_extremes, 1.5),
    (step_ranking, 1.2),
    (step_grouping, 1.2),
    (step_counting, 1.0),
    (step_sets, 1.0),
    (step_report, 1.2),
    (step_zip, 1.0),
    (step_lookup, 1.0),
    (step_guarded_division, 0.8),
    (step_math, 1.0),
    (step_deque, 0.8),
    (step_mutate, 0.8),
    (step_container, 0.9),
    (step_budget, 0.8),
    (step_summary, 0.9),
    (step_validate, 0.8),
    (step_strings, 0.7),
    (step_flags, 0.6),
)
